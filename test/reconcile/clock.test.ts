import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareRows, deliverReceived, reconcileRig, request, startProxiedCrm } from './support.js';

let world: Awaited<ReturnType<typeof startProxiedCrm>>;

beforeAll(async () => {
  world = await startProxiedCrm();
});
afterAll(() => world?.close());

const MINUTES_10 = 600_000;
const WEBHOOK_ID = 1;

/** The deliveries the webhook target received since `from`, queued as the ingest queues them. */
async function deliverSince(from: number): Promise<void> {
  await world.crm.core.dispatcher.idle();
  await deliverReceived(world.receiver, world.target.received.slice(from));
}

/**
 * A context whose contact 1 was created and delivered live, then changed while nobody received
 * (`category_idx` 7: the lost change); the rig reconciles through the skewed server.
 */
async function lostChange(context: string) {
  await world.crm.core.register(context, {
    name: 'crm-webhook-receiver',
    events: ['contact.created', 'contact.changed', 'contact.softdeleted'],
    targetUrl: world.target.url,
  });
  const delivered = world.target.received.length;
  world.crm.core.change(context, { op: 'create', table: 'contact', id: 1 });
  await deliverSince(delivered);
  const rig = await reconcileRig(world.crm, world.receiver, { apiUrl: world.proxy.apiUrl });
  await rig.drainWorkers();
  await new Promise((resolve) => setTimeout(resolve, 20));
  world.crm.core.change(context, { op: 'change', table: 'contact', id: 1, fields: { category_idx: 7 } });
  await world.crm.core.dispatcher.idle(); // sent, never received: lost
  return rig;
}

async function reconcile(rig: Awaited<ReturnType<typeof lostChange>>, context: string) {
  await rig.enqueue(
    request(context, { reason: 'manual', full: true, entities: ['contact'], webhookId: WEBHOOK_ID }),
  );
  await rig.runReconciles();
  await rig.drainWorkers();
  const [completed] = rig.lifecycle.published.slice(-1).map((e) => JSON.parse(e.Detail));
  const [recovery] = await world.receiver.store.listRecoveries(context);
  return { completed, card: recovery?.reconcile };
}

describe('snapshots are never ordered by the CRM API’s Date header (a real server in front of the simulator)', () => {
  it('(a) a Date stamped 1.5 s after the rows were read: a live change delivered in between wins over the snapshot', async () => {
    const context = 'CustClockA';
    const rig = await lostChange(context);
    let live = world.target.received.length;
    Object.assign(world.proxy.options, {
      skewMs: 0,
      stampDelayMs: 1_500,
      // Once, while the answer waits to be stamped: a change of the row, delivered and queued.
      afterRead: async () => {
        world.proxy.options.afterRead = undefined;
        live = world.target.received.length;
        world.crm.core.change(context, {
          op: 'change',
          table: 'contact',
          id: 1,
          fields: { category_idx: 8 },
        });
        await deliverSince(live);
      },
    });
    try {
      await reconcile(rig, context);
    } finally {
      Object.assign(world.proxy.options, { stampDelayMs: 0, afterRead: undefined });
    }

    // The live change is newer than the snapshot: its fields stay marked as changed since the values.
    const row = await world.receiver.store.getRow(context, 'contact', 1);
    expect(row?.lastEvent).toBe('contact.changed');
    expect(row?.changedFields).toContain('category_idx');
    // The next reconcile brings the value: every change applied.
    await reconcile(rig, context);
    const after = await compareRows(world.crm, world.receiver.store, context);
    expect(after.stored).toEqual(after.crm);
    expect((await world.receiver.store.getRow(context, 'contact', 1))?.changedFields).toEqual([]);
  }, 60_000);

  it('(b) a Date 10 minutes ahead: the lost change is applied and every live change after the recovery wins, a soft delete too; the skew is said', async () => {
    const context = 'CustClockB';
    const rig = await lostChange(context);
    Object.assign(world.proxy.options, { skewMs: MINUTES_10 });
    const { card } = await reconcile(rig, context).finally(() =>
      Object.assign(world.proxy.options, { skewMs: 0 }),
    );
    expect((await world.receiver.store.getRow(context, 'contact', 1))?.fieldValues).toMatchObject({
      category_idx: 7,
    });
    expect(card).toMatchObject({ status: 'completed', rowsChanged: 1 });
    expect(card?.clockSkewSeconds).toBeGreaterThanOrEqual(595);
    expect(card?.clockSkewSeconds).toBeLessThanOrEqual(602);

    const live = world.target.received.length;
    world.crm.core.change(context, { op: 'change', table: 'contact', id: 1, fields: { category_idx: 9 } });
    world.crm.core.change(context, { op: 'softdelete', table: 'contact', id: 1 });
    await deliverSince(live);
    await rig.drainWorkers();
    const row = await world.receiver.store.getRow(context, 'contact', 1);
    expect(row).toMatchObject({ status: 'softdeleted', lastEvent: 'contact.softdeleted' });
    expect(row?.changedFields).toContain('category_idx');
  }, 60_000);

  it('(c) a Date 10 minutes behind: the lost change wins over the older created event, and the skew is said', async () => {
    const context = 'CustClockC';
    const rig = await lostChange(context);
    Object.assign(world.proxy.options, { skewMs: -MINUTES_10 });
    const { completed, card } = await reconcile(rig, context).finally(() =>
      Object.assign(world.proxy.options, { skewMs: 0 }),
    );
    expect(completed).toMatchObject({ rowsListed: 1, rowsChanged: 1 });
    const after = await compareRows(world.crm, world.receiver.store, context);
    expect(after.stored).toEqual(after.crm);
    expect(card?.clockSkewSeconds).toBeLessThanOrEqual(-598);
    expect(card?.clockSkewSeconds).toBeGreaterThanOrEqual(-605);
  }, 60_000);
});
