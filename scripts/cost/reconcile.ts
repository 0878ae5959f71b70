import { parseDeliveryEvent } from '../../lib/events/index.js';
import { isRowEvent } from '../../lib/events/registry.js';
import type { Row } from '../../lib/model/types.js';
import { apply } from '../../lib/projection.js';
import { contentHash } from '../../lib/recognition.js';
import { toRowItem } from '../../lib/store/row-item.js';
import { buildSampleBody, dotNetTimestamp } from '../../tools/samples.js';
import { itemBytes, units } from './item-bytes.js';
import { measure } from './measure.js';
import { type CostLine, table } from './per-event.js';
import { ASSUMPTIONS, PRICES } from './prices.js';

/**
 * What reconciliation assumes (docs/deploy.md, "Cost per million events"): the reconcile function waits on
 * the CRM's API most of its time, one archive page answering `rowsPerPage` rows in about `pageMs`; it sends
 * snapshots 10 to a SendMessageBatch; the poll (`reconcilePoll`) is scheduled every minute (a schedule's
 * finest step) and polls the CRM when RECONCILE_POLL_SECONDS is due, in about `pollMs`.
 */
export const RECONCILE_ASSUMPTIONS = {
  memoryGb: 0.25,
  rowsPerPage: 50,
  pageMs: 400,
  snapshotsPerBatch: 10,
  pollMs: 400,
  /** An invocation with no poll due: one conditional write that fails. */
  idleMs: 30,
  /** RECONCILE_POLL_SECONDS by default. */
  pollSeconds: 300,
};

/**
 * Reconciliation's cost at AWS list prices, apart from the live events' table: per reconciled row that
 * changes its row (its share of the archive page the reconcile function waits for, its SendMessageBatch
 * entry, and the worker applying the snapshot as it applies a live event: its queue receive and delete,
 * invocation, duration, and at most the writes of one event); per row the CRM did not change (its share
 * of the page, the reconcile's read of the stored row, and no message, no worker: lib/reconcile/run/snapshots.ts);
 * and per poll (one scheduled invocation; a scheduled EventBridge rule's events cost nothing). The CRM's
 * own API calls are free here and counted in the `per` column.
 */
export function reconcileCostRows(workerBatchSize = 1): {
  perRow: CostLine[];
  perUnchangedRow: CostLine[];
  perPoll: CostLine[];
} {
  const r = RECONCILE_ASSUMPTIONS;
  const p = PRICES;
  const a = ASSUMPTIONS;
  const gbSeconds = (ms: number, gb: number) => (ms / 1000) * gb * p.lambdaArmPerGbSecond;
  const line = (item: string, per: string, dollars: number): CostLine => ({
    item,
    per,
    dollars,
    floor: true,
  });
  const perRow = [
    line('CRM API calls', `1 / ${r.rowsPerPage} archive page (the CRM's quota, not AWS's)`, 0),
    line(
      'Reconcile Lambda duration',
      `${r.pageMs} ms per page / ${r.rowsPerPage} rows × ${r.memoryGb * 1024} MB arm64`,
      gbSeconds(r.pageMs / r.rowsPerPage, r.memoryGb),
    ),
    line(
      'SQS FIFO: the snapshot',
      `1 / ${r.snapshotsPerBatch} SendMessageBatch + (1 receive + 1 delete batch) / ${workerBatchSize}`,
      (1 / r.snapshotsPerBatch + 2 / workerBatchSize) * p.sqsFifoPerRequest,
    ),
    line('Worker Lambda requests', `1 / ${workerBatchSize} invocation`, p.lambdaPerRequest / workerBatchSize),
    line(
      'Worker Lambda duration',
      `${a.workerMsPerEvent} ms × ${a.workerMemoryGb * 1024} MB arm64`,
      gbSeconds(a.workerMsPerEvent, a.workerMemoryGb),
    ),
    // The reconcile reads the row once (eventually consistent) to count it as changed or not; the worker
    // reads it again. A snapshot equal to the row writes one UpdateItem (its order keys); one that
    // changes it, a row and a record.
    line(
      'DynamoDB',
      "0.5 RRU (the reconcile's read) + 1 GetItem + 1 to 2 WRU",
      1.5 * p.dynamoPerRru + 2 * p.dynamoPerWru,
    ),
  ];
  // A row the CRM did not change: the page's share and the read the reconcile makes anyway (a row under
  // 4 KB, eventually consistent). Its order keys stay where they are when they are at or after the CRM's
  // last write of it (its `updated`/`registered`): the row holds what the CRM wrote then, from that
  // write's own event or an earlier snapshot, and any event still to come is older than them or newer
  // than the read. Only a row held from before that write (a snapshot equal to it, its keys older) gets
  // one conditional PutItem: priced separately in reconcileSection, it is not the usual case.
  const perUnchangedRow = [
    perRow[0]!,
    perRow[1]!,
    line('SQS, worker', 'none: no message, no invocation', 0),
    line('DynamoDB', "0.5 RRU (the reconcile's read of the stored row); no write", 0.5 * p.dynamoPerRru),
  ];
  const perPoll = [
    line('Scheduled rule', '1 event (free)', 0),
    line('Poll Lambda requests', '1 invocation', p.lambdaPerRequest),
    line(
      'Poll Lambda duration',
      `${r.pollMs} ms × ${r.memoryGb * 1024} MB arm64`,
      gbSeconds(r.pollMs, r.memoryGb),
    ),
    line('CRM API calls', "1 webhook list per context (the CRM's quota)", 0),
  ];
  return { perRow, perUnchangedRow, perPoll };
}

/**
 * Write units of one conditional put of a contact row as the workers store it (lib/store/row-item.ts)
 * after the stream {@link measure} delivers: the created event of the spec's sample, then nine changed.
 */
export function contactRowWru(): number {
  let row: Row | undefined;
  const start = Date.parse('2025-05-14T10:00:00Z');
  for (const [i, name] of ['contact.created', ...Array(9).fill('contact.changed')].entries()) {
    const body = buildSampleBody(name, {
      primaryKey: 418_233,
      timestamp: dotNetTimestamp(new Date(start + i * 1000)),
    });
    const parsed = parseDeliveryEvent(body);
    if (!parsed.ok || !isRowEvent(parsed.event)) throw new Error(`the sample ${name} does not parse`);
    row = apply(row, parsed.event, { contentHash: contentHash(JSON.stringify(body), String(body.EventId)) });
  }
  return units(itemBytes(toRowItem(row!, 10)), 1024);
}

/** Reconciliation's two tables, and what the every-minute schedule costs a month at the default interval. */
export async function reconcileSection(): Promise<string[]> {
  const r = RECONCILE_ASSUMPTIONS;
  const p = PRICES;
  const { perRow, perUnchangedRow, perPoll } = reconcileCostRows();
  const keysMoved = contactRowWru() * p.dynamoPerWru;
  const sum = (lines: CostLine[]) => lines.reduce((total, line) => total + line.dollars, 0);
  const minutes = 30.4 * 24 * 60;
  const polls = (30.4 * 86_400) / r.pollSeconds;
  const idle =
    Math.max(0, minutes - polls) *
    (p.lambdaPerRequest + (r.idleMs / 1000) * r.memoryGb * p.lambdaArmPerGbSecond + p.dynamoPerWru);
  return [
    '\n### Reconciliation: $ per million reconciled rows that change their row (worker batches of 1)\n',
    ...table(perRow).map((row) => row.replace('Per event', 'Per row')),
    '\n### Reconciliation: $ per million rows the CRM did not change (a full pass)\n',
    ...table(perUnchangedRow).map((row) => row.replace('Per event', 'Per row')),
    `\nA row held from before the CRM's last write of it (its order keys older) adds one conditional PutItem of ${contactRowWru()} WRU (a contact row): $${((sum(perUnchangedRow) + keysMoved) * 1e6).toFixed(3)} per million such rows.`,
    '\n### Reconciliation: $ per million polls\n',
    ...table(perPoll).map((row) => row.replace('Per event', 'Per poll')),
    `\nPolling every ${r.pollSeconds} s: ${Math.round(polls)} polls and ${Math.round(minutes - polls)} idle scheduled invocations a month, $${(sum(perPoll) * polls + idle).toFixed(4)} a month.`,
    `A scheduled full pass (RECONCILE_FULL_HOURS) reconciles every stored row: $${(sum(perUnchangedRow) * 1e5).toFixed(4)} per 100,000 unchanged rows a pass ($${(sum(perRow) * 1e5).toFixed(4)} per 100,000 changed ones), and about 0.01 CRM API calls per row.`,
  ];
}
