import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareRows, deliverReceived, reconcileRig, request, startProxiedCrm } from './support.js';

let world: Awaited<ReturnType<typeof startProxiedCrm>>;

beforeAll(async () => {
  world = await startProxiedCrm();
});
afterAll(() => world?.close());

/** Contacts 1 to `count` created in the CRM and delivered live, applied by the rig's workers. */
async function liveContacts(context: string, count: number) {
  await world.crm.core.register(context, {
    name: 'crm-webhook-receiver',
    events: ['contact.created', 'contact.changed'],
    targetUrl: world.target.url,
  });
  const delivered = world.target.received.length;
  for (let id = 1; id <= count; id++) world.crm.core.change(context, { op: 'create', table: 'contact', id });
  await world.crm.core.dispatcher.idle();
  await deliverReceived(world.receiver, world.target.received.slice(delivered));
  const rig = await reconcileRig(world.crm, world.receiver, { apiUrl: world.proxy.apiUrl });
  await rig.drainWorkers();
  return rig;
}

async function fullPass(rig: Awaited<ReturnType<typeof liveContacts>>, context: string) {
  const published = rig.bus.published.length;
  const applied = rig.applied.length;
  await rig.enqueue(request(context, { reason: 'full', full: true, entities: ['contact'] }));
  await rig.runReconciles();
  await rig.drainWorkers();
  const [completed] = rig.lifecycle.published.slice(-1).map((e) => JSON.parse(e.Detail));
  return {
    completed,
    published: rig.bus.published
      .slice(published)
      .map((e) => `${e.DetailType} ${JSON.parse(e.Detail).PrimaryKey}`),
    /** The snapshots the workers were given. */
    applied: rig.applied.slice(applied),
  };
}

const versions = async (context: string, ids: number[]) =>
  Promise.all(ids.map(async (id) => (await world.receiver.store.loadRow(context, 'contact', id)).version));

describe('a full pass over rows the CRM did not change', () => {
  it('costs no message, no worker and no write: the rows hold what the CRM wrote, with order keys at or after it', async () => {
    const context = 'CustSame';
    const rig = await liveContacts(context, 3);
    const before = await versions(context, [1, 2, 3]);

    const pass = await fullPass(rig, context);
    expect(pass.completed).toMatchObject({ rowsListed: 3, rowsChanged: 0 });
    expect(pass.applied).toEqual([]);
    expect(pass.published).toEqual([]);
    expect(await versions(context, [1, 2, 3])).toEqual(before);

    // A live change after the pass still wins.
    const live = world.target.received.length;
    world.crm.core.change(context, { op: 'change', table: 'contact', id: 2, fields: { category_idx: 4 } });
    await world.crm.core.dispatcher.idle();
    await deliverReceived(world.receiver, world.target.received.slice(live));
    await rig.drainWorkers();
    expect((await world.receiver.store.getRow(context, 'contact', 2))?.changedFields).toContain(
      'category_idx',
    );
  }, 60_000);

  it('moves the order keys of a row held from before the CRM’s last write of it in one conditional write, still no message', async () => {
    const context = 'CustKeys';
    const rig = await liveContacts(context, 2);
    // Row 1's order keys from before the CRM registered it (as a row restored from an older answer).
    const { item, version } = await world.receiver.store.loadRow(context, 'contact', 1);
    const old = '2001-01-01T00:00:00.0000000Z#00000000-0000-0000-0000-000000000001';
    await world.receiver.store.saveRow({ ...item!, fieldValuesSeq: old, statusSeq: old }, version);

    const pass = await fullPass(rig, context);
    expect(pass.completed).toMatchObject({ rowsListed: 2, rowsChanged: 0 });
    expect(pass.applied).toEqual([]);
    const after = await world.receiver.store.loadRow(context, 'contact', 1);
    expect(after.version).toBe(version + 2);
    expect((after.item?.fieldValuesSeq ?? '') > old).toBe(true);
    expect(after.item?.statusSeq).toBe(after.item?.fieldValuesSeq);
    expect(after.item?.eventCount).toBe(item!.eventCount);
  }, 60_000);
});

describe('an archive that writes numbers as text ("5")', () => {
  it('compares and stores them in the stored rows’ form: a full pass changes no row it did not change, and a new row is stored with numbers', async () => {
    const context = 'CustText';
    const rig = await liveContacts(context, 3);
    world.crm.core.change(context, { op: 'create', table: 'contact', id: 4 }); // lost: nobody receives it
    await world.crm.core.dispatcher.idle();
    const stored = (await world.receiver.store.getRow(context, 'contact', 1))?.fieldValuesJson;

    // A second later: an answer's Date (whole seconds) after the deliveries', so the snapshots count.
    await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 20));
    world.proxy.options.numbersAsText = true;
    const pass = await fullPass(rig, context).finally(() => {
      world.proxy.options.numbersAsText = false;
    });

    expect(pass.completed).toMatchObject({ rowsListed: 4, rowsChanged: 1 });
    expect(pass.published).toEqual(['contact.reconciled 4']);
    expect((await world.receiver.store.getRow(context, 'contact', 1))?.fieldValuesJson).toBe(stored);
    const added = await world.receiver.store.getRow(context, 'contact', 4);
    expect(typeof added?.fieldValues?.associate_id).toBe('number');
    const compared = await compareRows(world.crm, world.receiver.store, context);
    expect(compared.stored).toEqual(compared.crm);
  }, 60_000);
});
