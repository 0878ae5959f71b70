import type { BusEntry } from '../bus/entry.js';
import { lifecycleEntry } from '../reconcile/records/lifecycle.js';

/** The detail of `receiver.row.erased`: keys and counts, never data. */
export interface RowErasedDetail {
  context: string;
  /** Absent when a whole tenant was erased. */
  entity?: string | undefined;
  primaryKey?: number | undefined;
  erasedAt: string;
  rows: number;
  reason: 'request';
}

/** The bus entry of an erasure on request: subscribers match `receiver.row.erased` to erase their copies. */
export function rowErasedEntry(detail: RowErasedDetail): BusEntry {
  return lifecycleEntry('receiver.row.erased', detail);
}
