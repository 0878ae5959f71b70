/**
 * What an event does to its row (or webhook): `created` brings FieldValues, `changed` and
 * `softdeleted` name stale fields, `deleted` brings Values and ends the row, `action` (sale.sold,
 * person.consented, ...) is recorded and moves `last*` without touching the status, `state` sets a
 * webhook's state, `reconciled` (the receiver's own snapshot of a row as the CRM's REST API returned
 * it, lib/events/reconciled.ts) brings FieldValues and the row's status, or ends the row when the CRM
 * no longer has it. See lib/projection.ts and lib/webhook-state.ts.
 */
export type EventEffect =
  | 'created'
  | 'changed'
  | 'softdeleted'
  | 'deleted'
  | 'action'
  | 'state'
  | 'reconciled';

/** The effects that decide a row's status: the newest event with one of them sets it. */
export const STATUS_EFFECTS: ReadonlySet<EventEffect> = new Set([
  'created',
  'changed',
  'softdeleted',
  'deleted',
  'reconciled',
]);
