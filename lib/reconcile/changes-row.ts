import { parseDeliveryEvent } from '../events/index.js';
import { isRowEvent } from '../events/registry.js';
import { jsonMembers } from '../json-text.js';
import type { Row } from '../model/types.js';
import { apply, snapshotDiff } from '../projection.js';

/**
 * Whether a snapshot (a `<entity>.reconciled` message body) changes the stored row a worker would
 * merge it into: the worker's own rule (lib/workers/rows.ts: `apply`, then `snapshotDiff`), judged
 * on the row as the reconcile read it. A reconcile counts these as `rowsChanged`; the worker decides
 * again when it applies the snapshot, on the row as it is then.
 *
 * @example changesRow(undefined, body) // true: a row the receiver never stored
 */
export function changesRow(stored: Row | undefined, message: string | Uint8Array): boolean {
  if (stored === undefined) return true;
  const body = typeof message === 'string' ? message : new TextDecoder().decode(message);
  const parsed = parseDeliveryEvent(JSON.parse(body));
  if (!parsed.ok || !isRowEvent(parsed.event)) return true;
  const merged = apply(stored, parsed.event, { json: jsonMembers(body, ['FieldValues', 'Values']) });
  return snapshotDiff(stored, merged).changed;
}
