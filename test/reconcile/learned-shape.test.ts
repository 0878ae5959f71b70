import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RowEntity } from '../../lib/model/types.js';
import { tableOf } from '../../tools/crm/tables.js';
import { startTarget } from '../crm/support.js';
import { deliverReceived, receiverAndSimulator, reconcileRig, request } from './support.js';

const world = receiverAndSimulator();
let target: Awaited<ReturnType<typeof startTarget>>;

beforeAll(async () => {
  target = await startTarget();
});
afterAll(() => target?.close());

describe('a custom table’s fields, learnt from the rows the receiver stores', () => {
  it('a row stored before the tenant added a column does not make the newer rows look changed: only that row gains the column', async () => {
    const context = 'CustShape';
    const events = tableOf('y_equipment').verbs.map((verb) => `y_equipment.${verb}`);
    await world.crm.core.register(context, { name: 'crm-webhook-receiver', events, targetUrl: target.url });
    for (const id of [1, 2, 3]) world.crm.core.change(context, { op: 'create', table: 'y_equipment', id });
    await world.crm.core.dispatcher.idle();
    await deliverReceived(world.receiver, target.received);
    const rig = await reconcileRig(world.crm, world.receiver);
    await rig.drainWorkers();
    // Row 1 as delivered before x_active existed: the CRM has it now, for row 1 too.
    const entity = 'y_equipment' as RowEntity;
    const { item: old, version } = await world.receiver.store.loadRow(context, entity, 1);
    const { x_active: _, ...before } = old!.fieldValues as Record<string, unknown>;
    const current = await world.receiver.store.getRow(context, entity, 2);
    await world.receiver.store.saveRow(
      { ...old!, fieldValues: before, fieldValuesJson: JSON.stringify(before) },
      version,
    );

    // The snapshots' time (the CRM's Date header, to the second) after the deliveries'.
    await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 20));
    const published = rig.bus.published.length;
    await rig.enqueue(request(context, { reason: 'full', full: true, entities: ['y_equipment'] }));
    await rig.runReconciles();
    await rig.drainWorkers();

    const reconciled = rig.bus.published.slice(published).map((e) => {
      const detail = JSON.parse(e.Detail) as { PrimaryKey: number };
      return `${e.DetailType} ${detail.PrimaryKey}`;
    });
    expect(reconciled).toEqual(['y_equipment.reconciled 1']);
    expect((await world.receiver.store.getRow(context, entity, 1))?.fieldValues).toMatchObject({
      x_active: '[B:True]',
    });
    expect((await world.receiver.store.getRow(context, entity, 2))?.fieldValues).toEqual(
      current!.fieldValues,
    );
  }, 60_000);
});
