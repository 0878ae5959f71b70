import { type DeliveryEvent, isRowEvent } from '../../events/registry.js';
import { jsonMembers } from '../../json-text.js';
import type { Row } from '../../model/types.js';
import { apply, snapshotDiff } from '../../projection.js';

/**
 * What a snapshot would do to the stored row, by the worker's own rule (lib/workers/rows.ts: `apply`,
 * then `snapshotDiff`), judged on the row as the reconcile read it: `changes` it (or the row is not
 * stored, or cannot be judged here), `same` (nothing to do: the row holds these values with order keys
 * at or after the snapshot's), or `confirms` it: equal to what a reader sees, only the order keys of
 * its FieldValues and status move to the snapshot's, `row` (what the worker would write). `event` is
 * the snapshot's event as `buildSnapshot` parsed it, `body` its message's text.
 *
 * @example snapshotVerdict(undefined, event, body) // { kind: 'changes' }: a row the receiver never stored
 */
export function snapshotVerdict(
  stored: Row | undefined,
  event: DeliveryEvent,
  body: string,
): { kind: 'changes' } | { kind: 'same' } | { kind: 'confirms'; row: Row } {
  if (stored === undefined || !isRowEvent(event)) return { kind: 'changes' };
  const merged = apply(stored, event, { json: jsonMembers(body, ['FieldValues', 'Values']) });
  if (snapshotDiff(stored, merged).changed) return { kind: 'changes' };
  return merged === stored ? { kind: 'same' } : { kind: 'confirms', row: merged };
}
