import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeTyped, typedTagOf } from '../../lib/crm/index.js';
import type { RowEntity } from '../../lib/model/types.js';
import { type Row as CrmRow, tableOf } from '../../tools/crm/tables.js';
import { buildSampleBody } from '../../tools/samples.js';
import { startTarget } from '../crm/support.js';
import { deliverReceived, receiverAndSimulator, reconcileRig, request } from './support.js';

const world = receiverAndSimulator();
let target: Awaited<ReturnType<typeof startTarget>>;

beforeAll(async () => {
  target = await startTarget();
});
afterAll(() => target?.close());

/** The tables of the test: a fixed catalogue entity with a REST entity, a list, a custom table. */
const TABLES = ['projectmember', 'category', 'y_equipment'] as const;
const IDS = [1, 2, 3];

/** The deliveries the target has received since `from`, queued as the ingest queues them (its route). */
const deliverLive = (from: number) => deliverReceived(world.receiver, target.received.slice(from));

/**
 * The CRM's row as its webhooks' FieldValues write it (a custom table's typed as its sample shows),
 * against the receiver's stored FieldValues and status. Equal when converged.
 */
async function compare(context: string) {
  const data = world.crm.core.store.context(context);
  const crmSide: Record<string, unknown> = {};
  const storedSide: Record<string, unknown> = {};
  for (const name of TABLES) {
    const table = tableOf(name);
    const sample = buildSampleBody(`${table.entity}.created`, { primaryKey: 1 }).FieldValues as Record<
      string,
      unknown
    >;
    for (const id of IDS) {
      const row: CrmRow | undefined = data.rows[name]?.[id];
      const written = (field: string) => {
        const tag = typedTagOf(sample[field]);
        return tag === undefined ? row![field] : encodeTyped(row![field]!, tag);
      };
      crmSide[`${table.entity}/${id}`] = row
        ? {
            status: 'active',
            fieldValues: Object.fromEntries(Object.keys(sample).map((f) => [f, written(f)])),
          }
        : { status: 'deleted' };
      const stored = await world.receiver.store.getRow(context, table.entity as RowEntity, id);
      storedSide[`${table.entity}/${id}`] = stored && {
        status: stored.status,
        ...(row && { fieldValues: stored.fieldValues }),
      };
    }
  }
  return { crm: crmSide, stored: storedSide };
}

async function nextSecond(): Promise<Date> {
  const next = Math.ceil((Date.now() + 1) / 1000) * 1000;
  await new Promise((resolve) => setTimeout(resolve, next - Date.now() + 20));
  return new Date(next);
}

describe('a reconcile of the rest of the catalogue: a fixed catalogue entity, a list, a custom table', () => {
  it('finds the lists and tables from the webhooks, learns their fields from a stored row, converges changed and deleted rows, and says what it left out', async () => {
    const context = 'CustCat';
    const events = [
      ...TABLES.flatMap((name) => tableOf(name).verbs.map((verb) => `${tableOf(name).entity}.${verb}`)),
      'y_tool.created', // a custom table the receiver has no row of
    ];
    await world.crm.core.register(context, { name: 'crm-webhook-receiver', events, targetUrl: target.url });
    // Live: three rows of each table, delivered and applied.
    for (const table of TABLES)
      for (const id of IDS)
        world.crm.core.change(context, {
          op: 'create',
          table,
          id,
          ...(table === 'y_equipment' && { fields: { x_price: 100 + id } }),
        });
    await world.crm.core.dispatcher.idle();
    await deliverLive(0);
    const rig = await reconcileRig(world.crm, world.receiver);
    await rig.drainWorkers();
    const live = await compare(context);
    expect(live.stored).toEqual(live.crm);
    expect(live.stored['y_equipment/1']).toMatchObject({ fieldValues: { id: '[I:1]', x_price: '[F:101]' } });

    // The outage: changes nobody delivers. A list entry has no deleted event: it is gone all the same.
    const delivered = target.received.length;
    const from = await nextSecond();
    world.crm.core.change(context, {
      op: 'change',
      table: 'projectmember',
      id: 1,
      fields: { person_id: 99 },
    });
    world.crm.core.change(context, { op: 'delete', table: 'projectmember', id: 2 });
    world.crm.core.change(context, { op: 'change', table: 'category', id: 1, fields: { Name: 'Partner' } });
    delete world.crm.core.store.context(context).rows.category![2];
    world.crm.core.change(context, { op: 'change', table: 'y_equipment', id: 1, fields: { x_price: 99.5 } });
    world.crm.core.change(context, { op: 'delete', table: 'y_equipment', id: 2 });
    await world.crm.core.dispatcher.idle();
    expect(target.received.length).toBeGreaterThan(delivered); // sent, never applied: lost

    const published = rig.bus.published.length;
    rig.calls.length = 0;
    await rig.enqueue(request(context, { reason: 'gap-closed', from: from.toISOString() }));
    await rig.runReconciles();
    await rig.drainWorkers();

    const after = await compare(context);
    expect(after.stored).toEqual(after.crm);
    const reconciled = rig.bus.published.slice(published).map((e) => {
      const detail = JSON.parse(e.Detail) as { PrimaryKey: number };
      return `${e.DetailType} ${detail.PrimaryKey}`;
    });
    expect(reconciled.sort()).toEqual(
      [
        'projectmember.reconciled 1',
        'projectmember.reconciled 2',
        'list.category.reconciled 1',
        'list.category.reconciled 2',
        'y_equipment.reconciled 1',
        'y_equipment.reconciled 2',
      ].sort(),
    );
    const completed = rig.lifecycle.details().at(-1);
    expect(completed).toMatchObject({ rowsListed: 3, rowsChanged: 3, rowsDeleted: 3 });
    expect(completed!.entities).toEqual(
      expect.arrayContaining(['projectmember', 'list.category', 'y_equipment']),
    );
    // The webhook names them, and a custom table the receiver has no row of; nothing else is asked.
    expect(completed).toMatchObject({ scopeFrom: 'webhooks' });
    expect(completed!.entities).toEqual(['projectmember', 'list.category', 'y_equipment']);
    expect(completed!.notReconciled).toEqual({ y_tool: 'no stored row to learn its fields from' });
    // One call per candidate delete: the REST entity's 404 (ProjectMember), the archive's empty answer (the others).
    const confirmations = rig.calls.filter((call) => call.path.endsWith('/ProjectMember/2'));
    expect(confirmations).toEqual([expect.objectContaining({ status: 404 })]);

    // A full pass: every row the CRM has, an equal snapshot each, which changes nothing and publishes
    // nothing, and is counted as listed, not as changed.
    const beforeFull = rig.bus.published.length;
    await rig.enqueue(request(context, { reason: 'full', full: true }));
    await rig.runReconciles();
    await rig.drainWorkers();
    expect(rig.lifecycle.details().at(-1)).toMatchObject({ rowsListed: 6, rowsChanged: 0, rowsDeleted: 0 });
    expect(rig.bus.published.slice(beforeFull)).toEqual([]);
    const full = await compare(context);
    expect(full.stored).toEqual(after.stored);
  }, 120_000);

  it('a custom table whose table the CRM does not have is left out, in one line naming the table and the CRM’s answer; the run completes', async () => {
    const context = 'CustNoTable';
    // A row of y_tool stored from a delivery; the CRM (the simulator) has no such table.
    const body = buildSampleBody('y_tool.created', { primaryKey: 4, context });
    const raw = JSON.stringify(body);
    target.received.push({ at: Date.now(), headers: {}, raw, body });
    await deliverLive(target.received.length - 1);
    const rig = await reconcileRig(world.crm, world.receiver);
    await rig.drainWorkers();
    await rig.enqueue(request(context, { reason: 'manual', full: true, entities: ['y_tool'] }));
    await rig.runReconciles();

    expect(await rig.dlq()).toEqual([]);
    const [completed] = rig.lifecycle.details();
    const why = String((completed!.notReconciled as Record<string, string>).y_tool);
    expect(why).toContain("y_tool from the CRM's table y_tool (key id)");
    expect(why).toMatch(/HTTP 400: .*no table y_tool/);
    expect(why).not.toContain('\n');
  }, 60_000);

  it('confirms each delete of a table without a REST entity with one archive call: a row created after the ids were listed stays', async () => {
    const context = 'CustConfirm';
    const events = tableOf('y_equipment').verbs.map((verb) => `y_equipment.${verb}`);
    await world.crm.core.register(context, { name: 'crm-webhook-receiver', events, targetUrl: target.url });
    let from = target.received.length;
    for (const id of [1, 2]) world.crm.core.change(context, { op: 'create', table: 'y_equipment', id });
    await world.crm.core.dispatcher.idle();
    await deliverLive(from);
    let created = false;
    const rig = await reconcileRig(world.crm, world.receiver, {
      wrapFetch: (real) => async (input, init) => {
        const response = await real(input, init);
        const url = new URL(String(input instanceof Request ? input.url : input));
        // Right after the CRM listed its ids: row 3 is created, delivered and stored (the live path).
        if (
          url.searchParams.get('$select') === 'y_equipment.id' &&
          !url.searchParams.has('$filter') &&
          !created
        ) {
          created = true;
          from = target.received.length;
          world.crm.core.change(context, { op: 'create', table: 'y_equipment', id: 3 });
          await world.crm.core.dispatcher.idle();
          await deliverLive(from);
          await rig.drainWorkers();
        }
        return response;
      },
    });
    await rig.drainWorkers();
    await rig.enqueue(request(context, { reason: 'full', full: true, entities: ['y_equipment'] }));
    await rig.runReconciles();
    await rig.drainWorkers();

    expect(created).toBe(true);
    expect(rig.calls.filter((call) => call.path.endsWith('/archive/dynamic'))).toHaveLength(3); // changed, ids, row 3
    expect(rig.lifecycle.details().at(-1)).toMatchObject({ rowsListed: 2, rowsDeleted: 0 });
    expect(await world.receiver.store.getRow(context, 'y_equipment' as RowEntity, 3)).toMatchObject({
      status: 'active',
    });
  }, 60_000);

  it('without the webhook API (403), covers the entities it holds rows of, and says what it leaves out: the lists and tables, an entity ENTITIES leaves out', async () => {
    const context = 'CustRefused';
    world.crm.core.change(context, { op: 'create', table: 'ticket', id: 1 });
    world.crm.core.change(context, { op: 'create', table: 'contact', id: 1 });
    const rig = await reconcileRig(world.crm, world.receiver, {
      stores: (entity) => entity !== 'person',
      wrapFetch: (real) => async (input, init) =>
        new URL(String(input instanceof Request ? input.url : input)).pathname.endsWith('/Webhook')
          ? Response.json({ Error: 'the app has no access to the webhook API' }, { status: 403 })
          : real(input, init),
    });
    await rig.enqueue(request(context, { reason: 'manual', full: true, entities: ['ticket', 'person'] }));
    await rig.runReconciles();
    await rig.drainWorkers();
    await rig.enqueue(request(context, { reason: 'full', full: true }));
    await rig.runReconciles();
    await rig.drainWorkers();

    const [named, all] = rig.lifecycle.details();
    expect(named).toMatchObject({
      entities: ['ticket'],
      scopeFrom: 'request',
      notReconciled: { person: 'not in ENTITIES' },
    });
    const refused =
      'the CRM refused the webhook listing (HTTP 403): lists and custom tables unknown; name them in entities';
    // The ticket row the first run stored: the contact, which the receiver holds no row of, is not asked.
    expect(all).toMatchObject({
      entities: ['ticket'],
      scopeFrom: 'stored rows',
      rowsListed: 1,
      notReconciled: { 'list.*': refused, 'y_*': refused },
    });
    expect(await world.receiver.store.getRow(context, 'ticket' as RowEntity, 1)).toMatchObject({
      status: 'active',
    });
    expect(rig.calls.filter((call) => call.path.endsWith('/archive/dynamic')).length).toBeLessThanOrEqual(4);
  }, 60_000);
});
