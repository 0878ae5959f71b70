import { describe, expect, it } from 'vitest';
import { MAX_RETRY_AFTER_MS } from '../../lib/crm/call.js';
import { CrmRetryLater } from '../../lib/crm/index.js';
import { NO_COUNTS } from '../../lib/reconcile/run/cursor.js';
import { type ReconcileDeps, runReconcile } from '../../lib/reconcile/run/run.js';
import { startSkewedCrm } from '../support/skewed-crm.js';
import { receiverAndSimulator, reconcileRig, request } from './support.js';

const world = receiverAndSimulator();

/** A CRM whose API (the tenant state endpoint included) answers 503 for good, with `headers`. */
const downForGood =
  (headers: Record<string, string>) =>
  (real: typeof fetch): typeof fetch =>
  async (input, init) => {
    const url = new URL(String(input instanceof Request ? input.url : input));
    if (url.pathname.includes('Login')) return real(input, init);
    return Response.json({ Error: 'down' }, { status: 503, headers });
  };

const lastRunOf = async (context: string) =>
  (await world.receiver.store.listRecoveries(context))[0]?.reconcile;

describe('a run against a tenant that never comes back', () => {
  it('503 without Retry-After for good: gives up at RECONCILE_MAX_INVOCATIONS, failed on the bus and the gap card, nothing left queued', async () => {
    const context = 'CustGone';
    const rig = await reconcileRig(world.crm, world.receiver, {
      limits: { maxAttempts: 2 },
      wrapFetch: downForGood({}),
      bounds: { maxRunHours: 24, maxInvocations: 4 },
    });
    await rig.enqueue(
      request(context, { reason: 'gap-opened', webhookId: 9, from: new Date().toISOString() }),
    );

    const invocations = await rig.runReconciles(3_000, 40);

    expect(rig.results.filter((r) => r === 'carry-on')).toHaveLength(4);
    expect(invocations).toBeLessThan(40);
    expect(rig.lifecycle.published.map((e) => e.DetailType)).toEqual(['receiver.reconcile.failed']);
    expect(rig.lifecycle.details()[0]?.error).toMatch(/gave up .*RECONCILE_MAX_INVOCATIONS is 4/);
    expect(await lastRunOf(context)).toMatchObject({ status: 'failed', reason: 'gap-opened' });
    expect(await rig.dlq()).toEqual([]);
  }, 60_000);

  it('Retry-After of ten years: waits at most the cap each time, then fails past RECONCILE_MAX_RUN_HOURS instead of running for ever', async () => {
    const context = 'CustDecade';
    const rig = await reconcileRig(world.crm, world.receiver, {
      limits: { maxAttempts: 1 },
      wrapFetch: downForGood({ 'retry-after': '315360000' }),
      bounds: { maxRunHours: 1, maxInvocations: 1000 },
    });
    await rig.enqueue(request(context, { reason: 'poll', webhookId: 4, from: new Date().toISOString() }));

    await rig.runReconciles(50, 40);

    const waits = rig.results.filter((r) => r.startsWith('hide')).map((r) => Number(r.split(' ')[1]));
    expect(waits.length).toBeGreaterThanOrEqual(3);
    for (const seconds of waits) expect(seconds).toBeLessThanOrEqual(MAX_RETRY_AFTER_MS / 1000 + 10);
    expect(rig.lifecycle.published.map((e) => e.DetailType)).toEqual(['receiver.reconcile.failed']);
    expect(rig.lifecycle.details()[0]?.error).toMatch(/RECONCILE_MAX_RUN_HOURS is 1/);
    expect((await lastRunOf(context))?.status).toBe('failed');
  }, 60_000);
});

describe('a CRM that answers 503 without Retry-After', () => {
  it('is asked again later and later: the waits grow (full jitter, doubling) up to the 15-minute cap, then the run gives up', async () => {
    const context = 'CustDown';
    // A real server of the test's own: 503, no Retry-After, to every call (the tenant's state too).
    const down = await startSkewedCrm(new URL(world.crm.apiUrl('x')).origin, {
      answer: () => ({ status: 503, body: { Error: 'Service Unavailable' } }),
    });
    try {
      const rig = await reconcileRig(world.crm, world.receiver, {
        apiUrl: down.apiUrl,
        limits: { maxAttempts: 1 },
        bounds: { maxRunHours: 24, maxInvocations: 15 },
      });
      await rig.enqueue(request(context, { reason: 'poll', webhookId: 6, from: new Date().toISOString() }));

      await rig.runReconciles(50, 60);

      const waits = rig.results.filter((r) => r.startsWith('hide')).map((r) => Number(r.split(' ')[1]));
      console.log(`[reconcile] waits of a CRM down without Retry-After (s): ${waits.join(', ')}`);
      expect(waits).toHaveLength(14);
      for (let i = 1; i < waits.length; i++) expect(waits[i]).toBeGreaterThanOrEqual(waits[i - 1]!);
      expect(waits[0]).toBeLessThanOrEqual(1);
      // The ceiling doubles each wait (jitter 0.5 here) until half the cap.
      expect(waits.slice(-3)).toEqual([256, MAX_RETRY_AFTER_MS / 2000, MAX_RETRY_AFTER_MS / 2000]);
      expect(rig.lifecycle.details()[0]?.error).toMatch(/RECONCILE_MAX_INVOCATIONS is 15/);
    } finally {
      await down.close();
    }
  }, 60_000);
});

describe('the waits a run has asked for in a row', () => {
  const down = () => new CrmRetryLater('GET x: HTTP 503', 'CustWaits', 'unavailable', 100);
  /** A run of contact at its `waits`-th wait in a row, its CRM answering `pages` pages before it is down again. */
  const run = (waits: number, pages: number) => {
    let listed = 0;
    const crm = {
      tenantState: async () => ({ running: true, state: 'Running' }),
      listChanged: async () => {
        if (listed++ >= pages) throw down();
        return { items: [], continuation: undefined, nextKey: listed * 10, crmTime: Date.now() };
      },
    } as unknown as ReconcileDeps['crm'];
    const stored = { sampleFieldValues: async () => undefined, rows: async () => new Map() };
    const deps = {
      crm,
      stored: stored as unknown as ReconcileDeps['stored'],
      send: async () => undefined,
      stores: () => true,
      apiCalls: () => 0,
      timeLeftMs: () => 60_000,
      now: () => new Date(),
      warn: () => undefined,
      random: () => 0.5,
    } satisfies ReconcileDeps;
    const now = new Date().toISOString();
    const cursor = {
      startedAt: now,
      to: now,
      entities: ['contact'],
      entity: 0,
      phase: 'changed',
      counters: NO_COUNTS,
      waits,
    };
    return runReconcile({ context: 'CustWaits', reason: 'poll', from: now, requestedAt: now, cursor }, deps);
  };

  it('grow while the CRM stays down, and start again from the least once a page is done', async () => {
    // The 10th wait in a row: half (the jitter) of 250 ms × 2^9.
    expect(await run(9, 0)).toMatchObject({
      status: 'carry-on',
      delayMs: 64_000,
      request: { cursor: { waits: 10 } },
    });
    // A page done, then down again: the first wait of a new row (what the CRM asked, 100 ms, or 125 ms).
    expect(await run(9, 1)).toMatchObject({
      status: 'carry-on',
      delayMs: 125,
      request: { cursor: { waits: 1 } },
    });
  });
});

describe('two requests for the same window', () => {
  it('the newer supersedes the older: the older stops at its next invocation, one run completes', async () => {
    const context = 'CustTwice';
    for (let i = 0; i < 6; i++)
      world.crm.core.change(context, { op: 'create', table: 'contact', fields: {} });
    const rig = await reconcileRig(world.crm, world.receiver, {
      limits: { pageSize: 2 },
      pagesPerInvocation: 1,
    });
    const from = new Date(Date.now() - 60_000).toISOString();
    const window = { reason: 'gap-opened' as const, webhookId: 9, from, entities: ['contact'] };
    await rig.enqueue(
      request(context, { ...window, requestedAt: new Date(Date.now() - 1000).toISOString() }),
    );
    await rig.enqueue(request(context, { ...window, reason: 'poll' }));

    await rig.runReconciles();

    expect(rig.lifecycle.published.map((e) => e.DetailType)).toEqual(['receiver.reconcile.completed']);
    expect(rig.lifecycle.details()[0]).toMatchObject({ reason: 'poll', rowsListed: 6 });
    expect(await lastRunOf(context)).toMatchObject({ status: 'completed', reason: 'poll' });
  }, 60_000);
});
