import type { EventPublisher } from '../bus/publisher.js';
import type { RowEntity } from '../model/types.js';
import { VersionConflictError } from '../store/errors.js';
import type { Store } from '../store/types.js';
import { carriesRow } from './carries.js';
import { rowErasedEntry } from './erased-event.js';
import { eraseRowData } from './row.js';

/** What an erasure on request erases: one row (`entity` and `primaryKey`), or every row of a tenant. */
export interface ErasureTarget {
  context: string;
  entity?: RowEntity | undefined;
  primaryKey?: number | undefined;
}

/**
 * A place holding messages an erasure sweeps (the parked queue, a dead-letter queue, the local bus), by
 * its name in the report: `sweep` removes every message `carries` names and keeps every other one.
 */
export interface ErasureQueue {
  name: string;
  sweep(carries: (body: string | Uint8Array) => boolean): Promise<{ removed: number; complete: boolean }>;
}

export interface ErasureDeps {
  store: Pick<Store, 'loadRow' | 'saveRow' | 'eraseRowHistory' | 'tenantRows'>;
  queues: readonly ErasureQueue[];
  /** Where `receiver.row.erased` goes; absent when the stage publishes nothing. */
  publisher?: EventPublisher | undefined;
  now?: () => Date;
}

/** What an erasure erased, where. */
export interface ErasureReport {
  /** Stored rows whose data it erased (a row erased before counts again: it is checked and written). */
  rows: number;
  /** History records it erased (those erased before are not counted). */
  historyRecords: number;
  /** Messages carrying the rows it removed, by queue name. */
  messages: Record<string, number>;
  /** `receiver.row.erased` events published. */
  published: number;
  /** False when a queue's sweep stopped at its time budget: run it again to finish. */
  complete: boolean;
}

/**
 * Erases one row's personal data, or a whole tenant's, on request: each stored row
 * ({@link eraseRowData}, `erasedAt` set, so no later event brings data back), its history, then the
 * messages of the parked queue and the dead-letter queues that carry it (removed; every other message
 * put back, as a replay does), then `receiver.row.erased` for subscribers (keys only). Idempotent: run
 * again, it finds nothing left and says so.
 *
 * @example await eraseOnRequest(deps, { context: 'Cust12345', entity: 'person', primaryKey: 77 })
 */
export async function eraseOnRequest(deps: ErasureDeps, target: ErasureTarget): Promise<ErasureReport> {
  const erasedAt = (deps.now ?? (() => new Date()))().toISOString();
  const report: ErasureReport = { rows: 0, historyRecords: 0, messages: {}, published: 0, complete: true };
  const keys =
    target.entity !== undefined && target.primaryKey !== undefined
      ? [{ entity: target.entity, primaryKey: target.primaryKey }]
      : await deps.store.tenantRows(target.context);
  for (const { entity, primaryKey } of keys) {
    if (await eraseStoredRow(deps.store, target.context, entity, primaryKey, erasedAt)) report.rows++;
    report.historyRecords += await deps.store.eraseRowHistory(target.context, entity, primaryKey);
  }
  const carries = carriesRow(target);
  for (const queue of deps.queues) {
    const { removed, complete } = await queue.sweep(carries);
    report.messages[queue.name] = removed;
    report.complete &&= complete;
  }
  if (deps.publisher !== undefined) {
    const [result] = await deps.publisher.publish([
      rowErasedEntry({ ...target, erasedAt, rows: report.rows, reason: 'request' }),
    ]);
    if (result?.ok !== true) throw new Error('receiver.row.erased was not published: run the erasure again');
    report.published = 1;
  }
  return report;
}

/**
 * A whole tenant's personal data erased, as offboarding asks: {@link eraseOnRequest} for every stored
 * row of `context` (a scan of the rows table), and every queued message of that context.
 *
 * @example await eraseTenant(deps, 'Cust12345') // { rows: 1200, historyRecords: 9100, ... }
 */
export function eraseTenant(deps: ErasureDeps, context: string): Promise<ErasureReport> {
  return eraseOnRequest(deps, { context });
}

/** The stored row erased (one conditional put, retried on a concurrent write); false when none is stored. */
async function eraseStoredRow(
  store: ErasureDeps['store'],
  context: string,
  entity: RowEntity,
  primaryKey: number,
  erasedAt: string,
): Promise<boolean> {
  for (let attempt = 1; attempt <= 5; attempt++) {
    const { item, version } = await store.loadRow(context, entity, primaryKey);
    if (item === undefined) return false;
    try {
      await store.saveRow(eraseRowData(item, erasedAt), version);
      return true;
    } catch (error) {
      if (!(error instanceof VersionConflictError)) throw error;
    }
  }
  throw new Error(`the ${entity} row ${primaryKey} kept changing while it was erased: run the erasure again`);
}
