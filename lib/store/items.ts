import * as z from 'zod/mini';
import { familyOf, isKnownEntity, type RowEvent } from '../events/index.js';
import type { RowEntity } from '../model/types.js';

/**
 * The schemas of what the adapter reads back from the rows and events tables (webhook-items.ts: the
 * webhooks table's): every item is parsed at the boundary (parse-item.ts), so nothing upstairs meets an
 * attribute of the wrong type. Only the formats `lib/store` writes are read.
 */

const BinarySchema = z.instanceof(Uint8Array);

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
