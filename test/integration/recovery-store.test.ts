import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoStore, createRecoveryStore, type ReconcileOutcome } from '../../lib/store/index.js';
import { MAX_RECOVERY_ERROR_CHARS, type RecoveryStore } from '../../lib/store/recovery.js';
import type { Store } from '../../lib/store/types.js';
import { applyStateEvent } from '../../lib/webhook-state.js';
import { type LocalDynamo, startDynalite } from '../support/dynamo.js';
import { at, stateEvent } from '../support/workers.js';

/** The recovery items of the webhooks table (dynalite): what each gap's card shows of its webhook's recovery. */
let dynamo: LocalDynamo;
let store: Store;
let recovery: RecoveryStore;

beforeAll(async () => {
  dynamo = await startDynalite();
  const tables = await dynamo.createTables();
  store = createDynamoStore({ client: dynamo.doc, tables, retentionDays: 30 });
  recovery = createRecoveryStore(dynamo.doc, tables.webhooks);
});
afterAll(() => dynamo.close());

/** A run started at `startedAt` (requested a minute before), running unless `state` says otherwise. */
const run = (
  startedAt: string,
  state: Partial<Omit<ReconcileOutcome, 'startedAt'>> = {},
): ReconcileOutcome => ({
  status: 'running',
  reason: 'gap-opened',
  requestedAt: new Date(Date.parse(startedAt) - 60_000).toISOString(),
  startedAt,
  at: startedAt,
  ...state,
});
const completed = (startedAt: string, rowsListed = 3): ReconcileOutcome =>
  run(startedAt, {
    status: 'completed',
    at: at(100),
    rowsListed,
    rowsChanged: 1,
    rowsDeleted: 0,
    apiCalls: 4,
  });

describe('a webhook’s recovery item', () => {
  it('holds a run from its start to its outcome, listed by context and in all, beside the webhook item', async () => {
    expect(await recovery.recordReconcile('CustR1', 9, run(at(0)))).toBe(true);
    expect(await store.listRecoveries('CustR1')).toEqual([
      { context: 'CustR1', webhookId: 9, reconcile: run(at(0)) },
    ]);
    expect(await recovery.recordReconcile('CustR1', 9, completed(at(0)))).toBe(true);
    expect(await recovery.recordReactivation('CustR1', 9, at(50))).toBe(true);
    await recovery.recordReconcile('CustR1b', 4, run(at(0)));

    expect(await store.listRecoveries('CustR1')).toEqual([
      { context: 'CustR1', webhookId: 9, reconcile: completed(at(0)), reactivatedAt: at(50) },
    ]);
    expect((await store.listRecoveries()).map((r) => `${r.context}/${r.webhookId}`).sort()).toEqual([
      'CustR1/9',
      'CustR1b/4',
    ]);
    // No webhook, gap or marker query meets it.
    expect(await store.listWebhooks('CustR1')).toEqual([]);
  });

  it('is never overwritten by an older run’s outcome, nor by a late start of a run that ended, nor by an older reactivation', async () => {
    await recovery.recordReconcile('CustR2', 9, run(at(60)));
    // The run started at 0 ends after the one started at 60 did: its outcome is not recorded.
    expect(await recovery.recordReconcile('CustR2', 9, completed(at(0)))).toBe(false);
    expect(await recovery.recordReconcile('CustR2', 9, completed(at(60), 7))).toBe(true);
    expect(await recovery.recordReconcile('CustR2', 9, run(at(60)))).toBe(false);
    expect(await recovery.recordReactivation('CustR2', 9, at(90))).toBe(true);
    expect(await recovery.recordReactivation('CustR2', 9, at(30))).toBe(false);

    expect(await store.listRecoveries('CustR2')).toEqual([
      { context: 'CustR2', webhookId: 9, reconcile: completed(at(60), 7), reactivatedAt: at(90) },
    ]);
  });

  it('two outcomes written at once: the newer run’s stands, whichever lands last', async () => {
    for (let i = 0; i < 10; i++) {
      const older = completed(at(i * 10), 1);
      const newer = run(at(i * 10 + 5), { status: 'failed', at: at(i * 10 + 6), error: 'Error: x' });
      const written = await Promise.all(
        i % 2 === 0
          ? [recovery.recordReconcile('CustR3', 9, older), recovery.recordReconcile('CustR3', 9, newer)]
          : [recovery.recordReconcile('CustR3', 9, newer), recovery.recordReconcile('CustR3', 9, older)],
      );
      expect(written.filter(Boolean).length).toBeGreaterThanOrEqual(1);
      expect((await store.listRecoveries('CustR3'))[0]?.reconcile).toEqual(newer);
    }
  });

  it('keeps an error as one line of at most 500 characters', async () => {
    const error = `CrmError: GET /contact answered 500\n  at ${'x'.repeat(20_000)}\n\tmore`;
    await recovery.recordReconcile('CustR4', 9, run(at(0), { status: 'failed', error }));

    const kept = (await store.listRecoveries('CustR4'))[0]?.reconcile?.error ?? '';
    expect(kept).toHaveLength(MAX_RECOVERY_ERROR_CHARS);
    expect(kept).toMatch(/^CrmError: GET \/contact answered 500 at x+…$/);
  });

  it('leaves the webhook item alone: the state worker’s versioned put after it neither conflicts nor erases it', async () => {
    const started = applyStateEvent(
      undefined,
      stateEvent('webhook.started', { context: 'CustR5', primaryKey: 9 }),
    );
    await store.saveWebhook(started, 0);
    const { item, version } = await store.loadWebhook('CustR5', 9);
    await recovery.recordReconcile('CustR5', 9, completed(at(0)));
    const stopped = applyStateEvent(
      item,
      stateEvent('webhook.stopped', { context: 'CustR5', primaryKey: 9 }),
    );

    await store.saveWebhook(stopped, version);

    expect((await store.listWebhooks('CustR5'))[0]?.stateName).toBe('Stopped');
    expect((await store.listRecoveries('CustR5'))[0]?.reconcile).toEqual(completed(at(0)));
  });
});
