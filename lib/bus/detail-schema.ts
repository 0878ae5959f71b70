/**
 * What the receiver adds to a delivery's fields in the detail of the bus entry it publishes
 * (buildEntry, lib/bus/entry.ts): one schema, from which entry.ts takes its types and
 * never-matching.ts the fields a subscription's pattern may name. entry.ts imports its types only,
 * so the workers' bundles do not carry the schema.
 */
import * as z from 'zod/mini';
import { JsonText } from '../json-text.js';
import type { RowStatus } from '../model/types.js';
import { DROPPED_WHEN_TRUNCATED } from './entry.js';

/** The row as now stored. `fieldValues` may be JSON text ({@link JsonText}) to keep exact digits. */
export const RowSnapshotSchema = z.object({
  status: z.custom<RowStatus>(),
  changedFields: z.readonly(z.array(z.string())),
  lastEventId: z.string(),
  lastTimestamp: z.string(),
  fieldValues: z.optional(z.union([z.record(z.string(), z.unknown()), z.instanceof(JsonText)])),
});
export type RowSnapshot = z.infer<typeof RowSnapshotSchema>;

/** The webhook as now stored, with its open gap when it is not Active. */
export const WebhookSnapshotSchema = z.object({
  state: z.number(),
  stateName: z.string(),
  gap: z.optional(z.object({ openedAt: z.string(), openedByEventId: z.string() })),
});
export type WebhookSnapshot = z.infer<typeof WebhookSnapshotSchema>;

/**
 * The fields the receiver adds after the delivered ones; a truncated entry's `row` lacks the lists
 * it left out, and `truncated` and `dropped` say so.
 */
export const AddedDetailSchema = z.object({
  significantChanges: z.optional(z.array(z.unknown())),
  seq: z.string(),
  outcome: z.enum(['applied', 'late']),
  echo: z.boolean(),
  truncated: z.optional(z.literal(true)),
  dropped: z.optional(z.array(z.enum(DROPPED_WHEN_TRUNCATED))),
  row: z.optional(z.partial(RowSnapshotSchema)),
  webhook: z.optional(WebhookSnapshotSchema),
});
export type AddedDetail = z.infer<typeof AddedDetailSchema>;
