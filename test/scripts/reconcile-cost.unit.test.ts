import { describe, expect, it } from 'vitest';
import type { CostLine } from '../../scripts/cost/per-event.js';
import { PRICES } from '../../scripts/cost/prices.js';
import { contactRowWru, RECONCILE_ASSUMPTIONS, reconcileCostRows } from '../../scripts/cost/reconcile.js';

const total = (rows: CostLine[]) => rows.reduce((sum, { dollars }) => sum + dollars, 0);
const item = (rows: CostLine[], name: string) => rows.find((row) => row.item === name)!.dollars;

describe('scripts/cost.ts: reconciliation', () => {
  it('a reconciled row: its share of a page and of a SendMessageBatch, then the worker as for a live event', () => {
    const one = reconcileCostRows(1).perRow;
    const ten = reconcileCostRows(10).perRow;
    // The snapshots go 10 to a SendMessageBatch; the worker's receive and delete are per batch.
    expect(item(one, 'SQS FIFO: the snapshot')).toBeCloseTo((0.1 + 2) * PRICES.sqsFifoPerRequest, 12);
    expect(item(ten, 'SQS FIFO: the snapshot')).toBeCloseTo((0.1 + 0.2) * PRICES.sqsFifoPerRequest, 12);
    expect(item(ten, 'Worker Lambda requests')).toBeCloseTo(item(one, 'Worker Lambda requests') / 10, 12);
    // The reconcile function's wait on one archive page is shared by the page's rows.
    const page = reconcileCostRows(1).perRow;
    expect(item(page, 'Reconcile Lambda duration')).toBeCloseTo(
      (RECONCILE_ASSUMPTIONS.pageMs / RECONCILE_ASSUMPTIONS.rowsPerPage / 1000) *
        RECONCILE_ASSUMPTIONS.memoryGb *
        PRICES.lambdaArmPerGbSecond,
      15,
    );
    expect(total(ten)).toBeLessThan(total(one));
  });

  it('a row the CRM did not change: its share of a page and the stored row’s read, no message, no worker; at most $0.75 per million even with its order keys moved', () => {
    const { perRow, perUnchangedRow } = reconcileCostRows();
    expect(item(perUnchangedRow, 'SQS, worker')).toBe(0);
    expect(item(perUnchangedRow, 'DynamoDB')).toBeCloseTo(0.5 * PRICES.dynamoPerRru, 15);
    expect(total(perUnchangedRow) * 1e6).toBeLessThanOrEqual(0.75);
    // The rare row held from before the CRM's last write: one conditional put of the row more.
    expect(contactRowWru()).toBe(1);
    expect((total(perUnchangedRow) + contactRowWru() * PRICES.dynamoPerWru) * 1e6).toBeLessThanOrEqual(0.75);
    expect(total(perRow) * 1e6).toBeGreaterThan(2.5);
  });

  it('a poll: one invocation and its duration; the scheduled rule and the CRM calls cost AWS nothing', () => {
    const { perPoll } = reconcileCostRows();
    expect(item(perPoll, 'Scheduled rule')).toBe(0);
    expect(item(perPoll, 'CRM API calls')).toBe(0);
    expect(total(perPoll)).toBeCloseTo(
      PRICES.lambdaPerRequest +
        (RECONCILE_ASSUMPTIONS.pollMs / 1000) * RECONCILE_ASSUMPTIONS.memoryGb * PRICES.lambdaArmPerGbSecond,
      15,
    );
  });
});
