import * as z from 'zod/mini';
import { familyOf, isKnownEntity, type RowEvent, WebhookStateNameSchema } from '../events/index.js';
import type { LastAccepted, RowEntity, StateTransition } from '../model/types.js';
import { InvalidItemError } from './errors.js';

/**
 * The schemas of what the adapter reads back from DynamoDB: every item is parsed at the boundary, so
 * nothing upstairs meets an attribute of the wrong type. Only the formats `lib/store` writes are read.
 */

const BinarySchema = z.instanceof(Uint8Array);
const StateSchema = z.union([z.literal(0), z.literal(1), z.literal(2)]);

/** A row's entity, as the registry knows it (the catalogue's, a list's or a custom table's). */
export const RowEntitySchema = z.custom<RowEntity>(
  (value) => typeof value === 'string' && isKnownEntity(value),
);

/** A row event's name, as the registry knows it. */
const RowEventNameSchema = z.custom<RowEvent['Event']>((value) => {
  const family = typeof value === 'string' ? familyOf(value) : undefined;
  return family !== undefined && family.entity !== 'webhook';
});

/** A row item as `toRowItem` writes it (the key and the packed bookkeeping are read by row-item.ts). */
export const RowItemSchema = z.object({
  rowKey: z.string(),
  version: z.number(),
  merge: BinarySchema,
  fieldValuesJson: z.optional(BinarySchema),
  valuesJson: z.optional(BinarySchema),
  status: z.enum(['active', 'softdeleted', 'deleted']),
  fieldValuesTimestamp: z.optional(z.string()),
  changedFields: z.array(z.string()),
  lastEventId: z.string(),
  lastEvent: RowEventNameSchema,
  lastTimestamp: z.string(),
  changedByAssociateId: z.number(),
  eventCount: z.number(),
  createdAt: z.optional(z.string()),
  softDeletedAt: z.optional(z.string()),
  deletedAt: z.optional(z.string()),
  erasedAt: z.optional(z.string()),
  /** Order key of the newest event that set the status (action events do not). */
  statusSeq: z.optional(z.string()),
});

export type RowItem = z.infer<typeof RowItemSchema>;

/** A history item: the compressed body and what the body does not say. */
export const EventItemSchema = z.object({
  rowKey: z.string(),
  seq: z.string(),
  body: BinarySchema,
  echo: z.boolean(),
  conflictOf: z.optional(z.string()),
  resendOf: z.optional(z.string()),
  unpublished: z.optional(z.boolean()),
  changed: z.optional(z.array(z.string())),
  /** Its personal data erased (lib/store/erase.ts): `body` keeps only the envelope's identity and order. */
  erased: z.optional(z.boolean()),
  /** Of an erased record: the content hash of the body it had. */
  contentHash: z.optional(z.string()),
  signatureVerified: z.optional(z.boolean()),
  receivedAt: z.optional(z.string()),
  recordedAt: z.string(),
  expiresAt: z.number(),
});

export type EventItem = z.infer<typeof EventItemSchema>;

/** The fields a history record takes from its stored body (the ingest validated the whole body). */
export const EventBodySchema = z.looseObject({
  EventId: z.string(),
  Event: z.string(),
  Timestamp: z.string(),
  ContextIdentifier: z.string(),
  ChangedByAssociateId: z.number(),
});

const TransitionSchema = z.object({
  seq: z.string(),
  eventId: z.string(),
  timestamp: z.string(),
  state: StateSchema,
  gapFrom: z.optional(z.string()),
}) satisfies z.ZodMiniType<StateTransition>;

/** A webhook item (`webhook#<id>`); the item's `sk` and `version` are the adapter's. */
export const WebhookItemSchema = z.object({
  context: z.string(),
  sk: z.string(),
  version: z.number(),
  webhookId: z.number(),
  webhookName: z.string(),
  state: StateSchema,
  stateName: WebhookStateNameSchema,
  reportedState: z.optional(z.number()),
  events: z.optional(z.number()),
  registered: z.optional(z.string()),
  registeredAssociateId: z.optional(z.number()),
  updated: z.optional(z.string()),
  updatedAssociateId: z.optional(z.number()),
  registrationSeq: z.optional(z.string()),
  lastEventId: z.string(),
  lastTimestamp: z.string(),
  lastSeq: z.string(),
  stateChangedAt: z.string(),
  eventCount: z.number(),
  transitions: z.array(TransitionSchema),
});

/** A last-accepted marker (`accepted#<WebhookName>`). */
export const AcceptedItemSchema = z.object({
  seq: z.string(),
  timestamp: z.string(),
  eventId: z.string(),
  receivedAt: z.optional(z.string()),
}) satisfies z.ZodMiniType<LastAccepted>;

/**
 * `item` parsed with `schema`; throws {@link InvalidItemError} naming the table, the key and the first
 * offending attributes (never their values).
 */
export function parseItem<S extends z.ZodMiniType>(
  schema: S,
  item: unknown,
  table: string,
  key: string,
): z.infer<S> {
  const result = z.safeParse(schema, item);
  if (result.success) return result.data;
  const paths = result.error.issues.slice(0, 5).map((issue) => issue.path.join('.') || '(item)');
  throw new InvalidItemError(table, key, paths);
}
