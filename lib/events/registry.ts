import type * as z from 'zod/mini';
import type { Hooks } from '../hooks.js';
import type { QueueKey } from '../queue/port.js';
import { ActivityChangedSchema, ActivityCreatedSchema, ActivityDeletedSchema } from './activity.js';
import { dynamicEvent, effectOfVerb, FIXED_CATALOGUE, isDynamicEntity } from './catalogue.js';
import {
  ContactChangedSchema,
  ContactCreatedSchema,
  ContactDeletedSchema,
  ContactSoftDeletedSchema,
} from './contact.js';
import type { EventEffect } from './effects.js';
import { type EntityEvent, EntityEventSchema } from './entity.js';
import { RECONCILED_VERB, ReconciledEventSchema, reconciledEntity } from './reconciled.js';
import { WebhookErrorsSchema, WebhookStartedSchema, WebhookStoppedSchema } from './webhook.js';

export type { EventEffect } from './effects.js';

/** One event family: everything the receiver knows about a body `Event`, in one place. */
export interface EventFamily {
  schema: z.ZodMiniType;
  /** The row kind (`Entity`), or `webhook` for state events. */
  entity: string;
  /** The FIFO queue its deliveries go to. */
  queue: QueueKey;
  effect: EventEffect;
  /** Its hook in lib/hooks.ts: a name the compiler checks against {@link Hooks}. */
  hook: keyof Hooks;
  /** The receiver's own events (`<entity>.reconciled`): queued by the receiver, never accepted over HTTP. */
  synthetic?: true;
}

/** The hook of every family beyond the spec's ten. */
export const ENTITY_HOOK = 'onEntityEvent' satisfies keyof Hooks;

/**
 * The spec's ten events: strict schemas, and contact, activity and webhook state each on their own
 * queue. The rest of the catalogue is {@link familyOf}'s (see lib/events/catalogue.ts). To add a
 * family, see docs/workers.md, "Adding an event family".
 */
export const SPEC_EVENT_FAMILIES = {
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

export type EventName = keyof typeof SPEC_EVENT_FAMILIES;

/** An event of the spec, told apart by `Event`. */
export type SpecEvent = {
  [N in EventName]: z.infer<(typeof SPEC_EVENT_FAMILIES)[N]['schema']>;
}[EventName];

export type { EntityEvent } from './entity.js';

/** Every event the registry validates: the spec's, and the rest of the catalogue. */
export type DeliveryEvent = SpecEvent | EntityEvent;

/** The spec's entities with rows: contact and activity, each with its own queue and worker. */
export type SpecRowEntity = Exclude<(typeof SPEC_EVENT_FAMILIES)[EventName]['entity'], 'webhook'>;

/** The events that concern a row: the spec's contact and activity events and every catalogue event. */
export type RowEvent = Extract<SpecEvent, { Entity: SpecRowEntity }> | EntityEvent;

/** The catalogue's families with fixed names beyond the spec: `<entity>.<verb>` on the entities queue. */
export const CATALOGUE_FAMILIES: ReadonlyMap<string, EventFamily> = new Map(
  Object.entries(FIXED_CATALOGUE).flatMap(([entity, verbs]) =>
    verbs.map((verb): [string, EventFamily] => [`${entity}.${verb}`, entityFamily(entity, verb)]),
  ),
);

/** Every fixed event name: the spec's ten (with `webhook.<state>` as the body names them), then the catalogue's. */
export const FIXED_EVENT_NAMES: readonly string[] = [
  ...Object.keys(SPEC_EVENT_FAMILIES),
  ...CATALOGUE_FAMILIES.keys(),
];

/** Every fixed entity with rows: contact and activity, then the catalogue's (lists and tables are dynamic). */
export const FIXED_ENTITIES: readonly string[] = [
  ...new Set(
    FIXED_EVENT_NAMES.map((name) => familyOf(name)!.entity).filter((entity) => entity !== 'webhook'),
  ),
];

/** True for an entity with rows that the registry accepts: a fixed one, a list or a custom table. */
export function isKnownEntity(entity: string): boolean {
  return FIXED_ENTITIES.includes(entity) || isDynamicEntity(entity);
}

/**
 * The family of a body `Event`: one of the spec's ten, a fixed catalogue name, or a name of the
 * grammar for lists and custom tables (see lib/events/catalogue.ts). Undefined for anything else.
 *
 * @example familyOf('y_equipment.created') // { entity: 'y_equipment', queue: 'entities', effect: 'created', ... }
 */
export function familyOf(event: string): EventFamily | undefined {
  if (Object.hasOwn(SPEC_EVENT_FAMILIES, event)) return SPEC_EVENT_FAMILIES[event as EventName];
  const snapshotOf = reconciledEntity(event);
  if (snapshotOf !== undefined) return reconciledFamily(snapshotOf);
  const fixed = CATALOGUE_FAMILIES.get(event);
  if (fixed !== undefined) return fixed;
  const dynamic = dynamicEvent(event);
  return dynamic === undefined ? undefined : entityFamily(dynamic.entity, dynamic.verb);
}

/** The family of a validated event (which always has one). */
export function familyOfEvent(event: DeliveryEvent): EventFamily {
  const found = familyOf(event.Event);
  if (found === undefined) throw new Error(`no family for event ${event.Event}: not a validated event`);
  return found;
}

/** Every entity with rows, in registry order: the spec's contact and activity. */
export const ROW_ENTITIES: readonly SpecRowEntity[] = [
  ...new Set(
    Object.values(SPEC_EVENT_FAMILIES)
      .map((f) => f.entity)
      .filter((entity): entity is SpecRowEntity => entity !== 'webhook'),
  ),
];

/** True for an event of a row (not a webhook state event). */
export function isRowEvent(event: DeliveryEvent): event is RowEvent {
  return familyOfEvent(event).effect !== 'state';
}

/** True for one of the spec's ten events (strict schema, typed hook). */
export function isSpecEvent(event: DeliveryEvent): event is SpecEvent {
  return Object.hasOwn(SPEC_EVENT_FAMILIES, event.Event);
}

/**
 * `<entity>.reconciled` of any entity with rows (lib/events/reconciled.ts): on the queue of the
 * entity's live events, so a snapshot shares the row's FIFO group and worker. Undefined for an entity
 * the registry does not know.
 */
function reconciledFamily(entity: string): EventFamily | undefined {
  if (!isKnownEntity(entity)) return undefined;
  const live = Object.values(SPEC_EVENT_FAMILIES).find((family) => family.entity === entity);
  return {
    schema: ReconciledEventSchema,
    entity,
    queue: live?.queue ?? 'entities',
    effect: RECONCILED_VERB,
    hook: ENTITY_HOOK,
    synthetic: true,
  };
}

/** A catalogue family: the one envelope-level schema (the entity is checked beside it, see parse.ts). */
function entityFamily(entity: string, verb: string): EventFamily {
  return {
    schema: EntityEventSchema,
    entity,
    queue: 'entities',
    effect: effectOfVerb(verb),
    hook: ENTITY_HOOK,
  };
}

function family<
  S extends z.ZodMiniType,
  E extends string,
  Q extends QueueKey,
  F extends EventEffect,
  H extends keyof Hooks,
>(schema: S, entity: E, queue: Q, effect: F, hook: H) {
  return { schema, entity, queue, effect, hook };
}
