import { familyOfEvent, isDeletedSnapshot, type RowEvent } from '../events/index.js';
import type { Row } from '../model/types.js';
import { type ApplyOptions, apply } from '../projection.js';
import { eraseRowData } from './row.js';

/** True for an event that deletes its row for good (`<entity>.deleted`, a snapshot of a row the CRM no longer has): its body carries identifiers only. */
export function deletesRow(event: RowEvent): boolean {
  return familyOfEvent(event).effect === 'deleted' || isDeletedSnapshot(event);
}

/**
 * {@link apply}, then {@link eraseRowData} for a row erased already (on request) or deleted (for an
 * entity `erasesOnDelete` names, ERASE_ON_DELETE): whatever an event merges into such a row, it keeps
 * no personal data. The same row when the event is already part of it, as {@link apply} answers.
 *
 * @example applyErasing(erasedRow, lateCreated, {}, () => false).fieldValues === undefined
 */
export function applyErasing(
  row: Row | undefined,
  event: RowEvent,
  options: ApplyOptions,
  erasesOnDelete: ((entity: string) => boolean) | undefined,
): Row {
  const next = apply(row, event, options);
  return next !== row && isErased(next, erasesOnDelete) ? eraseRowData(next) : next;
}

/** Whether a row keeps no personal data: erased on request, or deleted for an entity of ERASE_ON_DELETE. */
export function isErased(row: Row, erasesOnDelete: ((entity: string) => boolean) | undefined): boolean {
  return row.erasedAt !== undefined || (row.status === 'deleted' && (erasesOnDelete?.(row.entity) ?? false));
}
