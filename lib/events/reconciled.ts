import * as z from 'zod/mini';
import { EnvelopeSchema } from './envelope.js';
import { AnyPayloadSchema, EmptyChangesSchema } from './primitives.js';

/** The verb of the receiver's own snapshot events: `<entity>.reconciled`. */
export const RECONCILED_VERB = 'reconciled';

/** The associate a snapshot names: the receiver, not a person (the CRM's ids start at 1). */
export const RECONCILE_ASSOCIATE_ID = 0;

/**
 * `<entity>.reconciled`: one row as the CRM's REST API returned it at fetch time F.
 * Built by the receiver only (lib/reconcile/run/snapshot-message.ts), never accepted over HTTP (the ingest refuses
 * it). The envelope's fields as a delivery has them, so it is ordered, recorded and published like
 * one:
 *
 * - `Timestamp` is F, the CRM's clock from the answer (its Date header: at or before the fetch), so a
 *   live event newer than F wins over the snapshot and one older than F arriving later is late;
 * - `EventId` is derived from the row, F and the content (the same snapshot fetched twice is one
 *   event) and starts with `00000000-`, so at the same Timestamp a live event orders after it: a tie
 *   goes to the live event, whose change the snapshot may not hold;
 * - `Changes` is empty and `ChangedByAssociateId` {@link RECONCILE_ASSOCIATE_ID}: what changed is the
 *   difference from the row, which only the worker knows;
 * - `FieldValues` exactly as the CRM wrote them, with the field names of the webhooks' FieldValues;
 *   or `Deleted: true` when the CRM answered that the row no longer exists (404). One or the other.
 */
export const ReconciledEventSchema = z
  .extend(EnvelopeSchema, {
    Entity: z.string().check(z.minLength(1)),
    FieldValues: AnyPayloadSchema,
    Deleted: z.optional(z.literal(true)),
    Changes: EmptyChangesSchema,
    ChangedByAssociateId: z.literal(RECONCILE_ASSOCIATE_ID, 'must be 0: a snapshot is the receiver’s'),
    Values: z.optional(z.never('a snapshot carries no Values')),
  })
  .check(
    z.refine((event) => (event.FieldValues === undefined) !== (event.Deleted === undefined), {
      message: 'a snapshot carries FieldValues or Deleted: true, one of them',
      path: ['FieldValues'],
    }),
  );

export type ReconciledEvent = z.infer<typeof ReconciledEventSchema>;

/** The entity of a `<entity>.reconciled` name, or undefined for any other name. */
export function reconciledEntity(name: string): string | undefined {
  const suffix = `.${RECONCILED_VERB}`;
  return name.endsWith(suffix) && name.length > suffix.length ? name.slice(0, -suffix.length) : undefined;
}

/** True for a snapshot of a row the CRM no longer has. */
export function isDeletedSnapshot(event: { Event: string; Deleted?: unknown }): boolean {
  return reconciledEntity(event.Event) !== undefined && event.Deleted === true;
}
