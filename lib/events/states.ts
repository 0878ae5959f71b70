/** The state a webhook is in after each state event (0 Active, 1 Stopped, 2 TooManyErrors). */
export const WEBHOOK_STATE_BY_EVENT = {
  'webhook.started': 0,
  'webhook.stopped': 1,
  'webhook.errors': 2,
} as const;

export type WebhookState = (typeof WEBHOOK_STATE_BY_EVENT)[keyof typeof WEBHOOK_STATE_BY_EVENT];
export const WEBHOOK_STATE_NAMES = ['Active', 'Stopped', 'TooManyErrors'] as const;
