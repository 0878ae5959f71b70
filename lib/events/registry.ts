import type * as z from 'zod/mini';
import type { QueueKey } from '../queue/port.js';
import { ActivityChangedSchema, ActivityCreatedSchema, ActivityDeletedSchema } from './activity.js';
import {
  ContactChangedSchema,
  ContactCreatedSchema,
  ContactDeletedSchema,
  ContactSoftDeletedSchema,
} from './contact.js';
import { WebhookErrorsSchema, WebhookStartedSchema, WebhookStoppedSchema } from './webhook.js';

/**
 * What an event does to its row (or webhook): `created` brings FieldValues, `changed` and
 * `softdeleted` name stale fields, `deleted` brings Values and ends the row, `state` sets a webhook's
 * state. See lib/projection.ts and lib/webhook-state.ts.
 */
export type EventEffect = 'created' | 'changed' | 'softdeleted' | 'deleted' | 'state';

/** One event family: everything the receiver knows about a body `Event`, in one place. */
export interface EventFamily {
  schema: z.ZodMiniType;
  /** The row kind (`Entity`), or `webhook` for state events. */
  entity: string;
  /** The FIFO queue its deliveries go to. */
  queue: QueueKey;
  effect: EventEffect;
  /** The name of its hook in lib/hooks.ts. */
  hook: string;
}

/**
 * The registry: one entry per event family, and the only list of events in the project. Routing,
 * validation, the projection's effects, the hooks, the samples and the admin API derive from it.
 * To add a family, add its schema and one entry here (and, for a new queue, its infra definition:
 * see docs/workers.md, "Adding an event family").
 */
export const EVENT_FAMILIES = {
  'webhook.started': family(
    WebhookStartedSchema,
    'webhook',
    'webhookState',
    'state',
    'onWebhookStateChanged',
  ),
  'webhook.stopped': family(
    WebhookStoppedSchema,
    'webhook',
    'webhookState',
    'state',
    'onWebhookStateChanged',
  ),
  'webhook.errors': family(WebhookErrorsSchema, 'webhook', 'webhookState', 'state', 'onWebhookStateChanged'),
  'contact.created': family(ContactCreatedSchema, 'contact', 'contact', 'created', 'onContactCreated'),
  'contact.changed': family(ContactChangedSchema, 'contact', 'contact', 'changed', 'onContactChanged'),
  'contact.softdeleted': family(
    ContactSoftDeletedSchema,
    'contact',
    'contact',
    'softdeleted',
    'onContactSoftDeleted',
  ),
  'contact.deleted': family(ContactDeletedSchema, 'contact', 'contact', 'deleted', 'onContactDeleted'),
  'activity.created': family(ActivityCreatedSchema, 'activity', 'activity', 'created', 'onActivityCreated'),
  'activity.changed': family(ActivityChangedSchema, 'activity', 'activity', 'changed', 'onActivityChanged'),
  'activity.deleted': family(ActivityDeletedSchema, 'activity', 'activity', 'deleted', 'onActivityDeleted'),
} as const;

export type EventName = keyof typeof EVENT_FAMILIES;

/** Every event the registry validates, told apart by `Event`. */
export type DeliveryEvent = {
  [N in EventName]: z.infer<(typeof EVENT_FAMILIES)[N]['schema']>;
}[EventName];

/** Entities that have rows (everything but `webhook`). */
export type RowEntity = Exclude<(typeof EVENT_FAMILIES)[EventName]['entity'], 'webhook'>;

/** The events that concern a row (contact and activity events). */
export type RowEvent = Extract<DeliveryEvent, { Entity: RowEntity }>;

/** The family of a body `Event`, or undefined for an event the registry does not know. */
export function familyOf(event: string): EventFamily | undefined {
  return Object.hasOwn(EVENT_FAMILIES, event) ? EVENT_FAMILIES[event as EventName] : undefined;
}

/** Every entity with rows, in registry order. */
export const ROW_ENTITIES: readonly RowEntity[] = [
  ...new Set(
    Object.values(EVENT_FAMILIES)
      .map((f) => f.entity)
      .filter((entity): entity is RowEntity => entity !== 'webhook'),
  ),
];

/** True for an event of a row (not a webhook state event). */
export function isRowEvent(event: DeliveryEvent): event is RowEvent {
  return EVENT_FAMILIES[event.Event].entity !== 'webhook';
}

function family<
  S extends z.ZodMiniType,
  E extends string,
  Q extends QueueKey,
  F extends EventEffect,
  H extends string,
>(schema: S, entity: E, queue: Q, effect: F, hook: H) {
  return { schema, entity, queue, effect, hook };
}
