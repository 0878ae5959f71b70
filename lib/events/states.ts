import * as z from 'zod/mini';

/** The state a webhook is in after each state event (0 Active, 1 Stopped, 2 TooManyErrors). */
export const WEBHOOK_STATE_BY_EVENT = {
  'webhook.started': 0,
  'webhook.stopped': 1,
  'webhook.errors': 2,
} as const;

export type WebhookState = (typeof WEBHOOK_STATE_BY_EVENT)[keyof typeof WEBHOOK_STATE_BY_EVENT];

/**
 * A webhook's state by name, as the REST API writes it, indexed by its number: the one list of them
 * (the CRM client, the stored webhook and the simulator read it here).
 */
export const WEBHOOK_STATE_NAMES = ['Active', 'Stopped', 'TooManyErrors'] as const;
export const WebhookStateNameSchema = z.enum(WEBHOOK_STATE_NAMES);
export type WebhookStateName = z.infer<typeof WebhookStateNameSchema>;

/** The state that delivers: any other opens a gap in the rows (lib/webhook-state.ts). */
export const ACTIVE: WebhookState = WEBHOOK_STATE_BY_EVENT['webhook.started'];

/** The state that stops the sender's deliveries (an alert when a webhook enters it). */
export const TOO_MANY_ERRORS: WebhookState = WEBHOOK_STATE_BY_EVENT['webhook.errors'];
