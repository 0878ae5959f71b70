import { fieldRecord } from '../field-record.js';
import type { Row } from '../model/types.js';

/**
 * A deleted row without its personal data: FieldValues, Values and the stale fields (named by
 * Changes) go; the key, the status, the timestamps (`createdAt`, `softDeletedAt`, `deletedAt`), the
 * last event's id and name, the count and every order key stay. The order keys are what keeps the row
 * erased: a late event older than `fieldValuesSeq` never sets FieldValues, and the worker erases
 * again whatever a newer one merges (a deleted row stays deleted). The content hashes of the recent
 * window stay too (a truncated SHA-256: they tell a redelivery from a resend, and say nothing readable).
 *
 * `erasedAt`: the time of an erasure on request, which marks the row erased whatever its status; a
 * row kept until then. An erasure on delete sets none: the deleted status says it, and stays.
 *
 * @example eraseRowData(row).fieldValues === undefined
 */
export function eraseRowData(row: Row, erasedAt?: string): Row {
  const { fieldValues: _f, fieldValuesJson: _fj, values: _v, valuesJson: _vj, ...kept } = row;
  const at = row.erasedAt ?? erasedAt;
  return {
    ...kept,
    changedFields: [],
    changedFieldSeqs: fieldRecord(),
    ...(at !== undefined && { erasedAt: at }),
  };
}

/** The members of a delivery body an erased history record keeps: its identity and order, no data. */
const KEPT_MEMBERS = [
  'EventId',
  'Timestamp',
  'Event',
  'PrimaryKey',
  'Entity',
  'ContextIdentifier',
  'ChangedByAssociateId',
  'WebhookName',
  'Deleted',
] as const;

/**
 * A history record's body without personal data: the envelope's identity and order members (see
 * {@link KEPT_MEMBERS}) and an empty Changes; FieldValues, Values and Changes' field names go.
 *
 * @example erasedBody('{"EventId":"e","Event":"person.created","FieldValues":{"firstname":"Ada"}}')
 * // '{"EventId":"e","Event":"person.created","Changes":[]}'
 */
export function erasedBody(body: string): string {
  const parsed = JSON.parse(body) as Record<string, unknown>;
  const kept: Record<string, unknown> = {};
  for (const member of KEPT_MEMBERS) if (parsed[member] !== undefined) kept[member] = parsed[member];
  return JSON.stringify({ ...kept, Changes: [] });
}
