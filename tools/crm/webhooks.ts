import { WEBHOOK_STATE_NAMES, type WebhookStateName } from '../../lib/events/states.js';
import { crmTime, NEVER } from './tables.js';

/** A webhook's state by name, as the REST API writes it. */
export type WebhookState = WebhookStateName;

/** The state events' `FieldValues.state` and the event verb of each state (webhook-event-delivery.md). */
export const STATE_NUMBER = Object.fromEntries(
  WEBHOOK_STATE_NAMES.map((name, number) => [name, number]),
) as Record<WebhookState, number>;
export const STATE_VERB: Record<WebhookState, string> = {
  Active: 'started',
  Stopped: 'stopped',
  TooManyErrors: 'errors',
};

/** A registered webhook with its usage counters (the CRM's `webhook_usage`). */
export interface Webhook {
  id: number;
  name: string;
  /** Event names: `contact.changed`, `webhook7.errors`, ... */
  events: string[];
  targetUrl: string;
  secret?: string;
  state: WebhookState;
  /** Added to every delivery as headers. */
  headers: Record<string, string>;
  /** Added to every delivery's body as top-level fields. */
  properties: Record<string, unknown>;
  /** Mailed when the webhook goes to TooManyErrors. */
  errorsEmail?: string;
  registered: string;
  registeredAssociateId: number;
  updated: string;
  updatedAssociateId: number;
  /** Events sent (delivered or not), the state events' `FieldValues.events`. */
  eventsSent: number;
  totalCalls: number;
  totalErrors: number;
  consecutiveErrors: number;
  lastError: string;
  /** Events of this webhook discarded after their third failed attempt. */
  discarded: number;
  /** Events it is registered for that were never sent because it was not Active. */
  notSent: number;
}

export interface WebhookInput {
  name: string;
  events: string[];
  targetUrl: string;
  secret?: string;
  headers?: Record<string, string>;
  properties?: Record<string, unknown>;
  errorsEmail?: string;
  associateId?: number;
}

/** A new Active webhook with zeroed counters. */
export function newWebhook(id: number, input: WebhookInput, now = new Date()): Webhook {
  return {
    id,
    name: input.name,
    events: [...input.events],
    targetUrl: input.targetUrl,
    ...(input.secret ? { secret: input.secret } : {}),
    state: 'Active',
    headers: { ...input.headers },
    properties: { ...input.properties },
    ...(input.errorsEmail ? { errorsEmail: input.errorsEmail } : {}),
    registered: crmTime(now),
    registeredAssociateId: input.associateId ?? 5,
    updated: NEVER,
    updatedAssociateId: 0,
    eventsSent: 0,
    totalCalls: 0,
    totalErrors: 0,
    consecutiveErrors: 0,
    lastError: '',
    discarded: 0,
    notSent: 0,
  };
}

/** The REST resource (`GET /api/v1/Webhook/{id}`): PascalCase, the secret never shown. */
export function webhookResource(webhook: Webhook): Record<string, unknown> {
  return {
    WebhookId: webhook.id,
    Name: webhook.name,
    Events: webhook.events,
    TargetUrl: webhook.targetUrl,
    Secret: null,
    State: webhook.state,
    Type: 'webhook',
    Headers: webhook.headers,
    Properties: webhook.properties,
    ErrorsEmail: webhook.errorsEmail ?? '',
    Registered: webhook.registered,
    RegisteredAssociate: { AssociateId: webhook.registeredAssociateId },
    Updated: webhook.updated,
    UpdatedAssociate: { AssociateId: webhook.updatedAssociateId },
  };
}

/** The state events' FieldValues of `webhook` (webhook-event-delivery.md). */
export function stateFieldValues(webhook: Webhook): Record<string, unknown> {
  return {
    events: webhook.eventsSent,
    // The spec writes this one with an offset (the CRM's times are UTC), `updated` without.
    registered: `${webhook.registered}+00:00`,
    registered_associate_id: webhook.registeredAssociateId,
    state: STATE_NUMBER[webhook.state],
    updated: webhook.updated,
    updated_associate_id: webhook.updatedAssociateId,
  };
}

/** The usage counters as the dynamic provider's `webhook_usage` table shows them. */
export function usageRow(webhook: Webhook): Record<string, string | number> {
  return {
    webhook_usage_id: webhook.id,
    total_calls: webhook.totalCalls,
    total_errors: webhook.totalErrors,
    consecutive_errors: webhook.consecutiveErrors,
    last_error: webhook.lastError,
  };
}

/** A webhook as the control API shows it: everything but the secret (whether there is one). */
export function publicWebhook({
  secret,
  ...webhook
}: Webhook): Omit<Webhook, 'secret'> & { signed: boolean } {
  return { ...webhook, signed: secret !== undefined };
}
