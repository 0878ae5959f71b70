import { describe, expect, it } from 'vitest';
import { MAX_RETRY_AFTER_MS } from '../../lib/crm/call.js';
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
