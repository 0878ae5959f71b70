import type { ArchiveRow } from '../../crm/index.js';
import { eventSeq } from '../../model/order-key.js';
import type { Row } from '../../model/types.js';
import type { OutboundMessage } from '../../queue/port.js';
import type { StoredRows } from '../../store/row-set.js';
import { type Exchange, rowWrittenAt, snapshotTime } from './clock.js';
import type { Cursor } from './cursor.js';
import { type SnapshotShape, snapshotFieldValues } from './fields.js';
import { buildSnapshot, SnapshotError } from './snapshot-message.js';
import { snapshotVerdict } from './snapshot-verdict.js';

export interface PageDeps {
  stored: Pick<StoredRows, 'rows' | 'confirm'>;
  /** One line about a row skipped (it cannot become a snapshot). */
  warn(message: string): void;
}

/** What one archive page comes to: the snapshots for the rows' queues, and how many rows they change. */
export interface PageSnapshots {
  messages: OutboundMessage[];
  changing: number;
}

/**
 * The snapshots of one archive page, against the stored rows (read once, eventually consistent): each
 * row at F = {@link snapshotTime}, its FieldValues in the stored row's form. Only a snapshot that
 * changes its row (or whose row is not stored) goes to the row's queue and its worker
 * ({@link snapshotVerdict} decides, by the workers' rule); one equal to the row costs no message:
 * nothing when the row's order keys are at or after the CRM's last write of it (the usual case: it
 * holds what the CRM wrote then, from its event or an earlier snapshot; see `keysBefore`), else the
 * worker's own write of the order keys moved to F, conditional on the version read (a row that moved
 * meanwhile gets the snapshot through its queue after all).
 */
export async function pageSnapshots(
  deps: PageDeps,
  cursor: Cursor,
  at: { context: string; entity: string; shape: SnapshotShape; exchange: Exchange; senderAheadMs: number },
  items: readonly ArchiveRow[],
): Promise<PageSnapshots> {
  const { context, entity, shape, exchange } = at;
  const stored = await deps.stored.rows(
    context,
    entity,
    items.map((row) => Number(row.id)),
  );
  const messages: OutboundMessage[] = [];
  const confirms: Array<Promise<OutboundMessage | undefined>> = [];
  for (const row of items) {
    const key = { context, entity, primaryKey: Number(row.id) };
    const known = stored.get(key.primaryKey);
    const built = snapshot(deps, cursor, () =>
      buildSnapshot({
        ...key,
        fetchedAt: snapshotTime(row.values, exchange, at.senderAheadMs),
        receivedAt: new Date(exchange.answeredAt),
        fieldValues: snapshotFieldValues(shape, row.values, key, known?.row.fieldValues),
      }),
    );
    if (built === undefined) continue;
    const { message, event } = built;
    const verdict = snapshotVerdict(known?.row, event, message.body);
    if (verdict.kind === 'changes') messages.push(message);
    else if (verdict.kind === 'confirms' && keysBefore(known!.row, verdict.row, rowWrittenAt(row.values)))
      confirms.push(
        deps.stored.confirm(verdict.row, known!.version).then((done) => (done ? undefined : message)),
      );
  }
  const changing = messages.length;
  for (const moved of await Promise.all(confirms)) if (moved !== undefined) messages.push(moved);
  return { messages, changing };
}

/**
 * Whether confirming a row must write its order keys: when one the snapshot moves is older than the
 * CRM's last write of the row (`writtenAt`: its `updated`/`registered`; unknown: always). A key at or
 * after it need not move: a live event the CRM can still send about the row is either older than that
 * key (it loses to it already) or a change of the row's own table after the CRM's read (a later one
 * would have moved `updated`), newer than F, which wins over the snapshot wherever the keys stand.
 */
function keysBefore(row: Row, confirmed: Row, writtenAt: number | undefined): boolean {
  if (writtenAt === undefined) return true;
  const written = eventSeq({ Timestamp: new Date(writtenAt).toISOString(), EventId: '' });
  const moved = (['fieldValuesSeq', 'statusSeq'] as const).filter((key) => confirmed[key] !== row[key]);
  return moved.some((key) => (row[key] ?? '') < written);
}

/** The snapshot `build` makes, or undefined (counted as skipped, one line) when the row cannot become one. */
export function snapshot<T>(deps: Pick<PageDeps, 'warn'>, cursor: Cursor, build: () => T): T | undefined {
  try {
    return build();
  } catch (error) {
    if (!(error instanceof SnapshotError)) throw error;
    cursor.counters.skipped++;
    deps.warn(error.message);
    return undefined;
  }
}
