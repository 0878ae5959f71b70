import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crmWindowTime } from '../../lib/crm/index.js';
import type { RunningCrm } from '../../tools/crm/start.js';
import { NEVER } from '../../tools/crm/tables.js';
import { compareRows, type Receiver, reconcileRig, request, startReceiver, startSimulator } from './support.js';

let receiver: Receiver;
let simulator: Awaited<ReturnType<typeof startSimulator>>;
let crm: RunningCrm;

beforeAll(async () => {
  receiver = await startReceiver();
  simulator = await startSimulator();
  crm = simulator.crm;
});
afterAll(async () => {
  await simulator?.stop();
  await receiver?.close();
});

/** Creates rows in the CRM: `count` of each table, with a name. */
function seed(context: string, tables: Record<string, number>) {
  for (const [table, count] of Object.entries(tables))
    for (let i = 1; i <= count; i++) crm.core.change(context, { op: 'create', table, fields: {} });
}

/** The rows reconciled over API calls, printed (the goal: at most 1.2 calls per reconciled row). */
function callsPerRow(label: string, calls: number, detail: { rowsListed: number; rowsDeleted: number }) {
  const rows = detail.rowsListed + detail.rowsDeleted;
  const ratio = rows === 0 ? Number.NaN : calls / rows;
  console.log(`[reconcile] ${label}: ${calls} API calls for ${rows} reconciled rows = ${ratio.toFixed(2)} per row`);
  return ratio;
}

describe('a reconcile against the CRM simulator, applied by the real workers (dynalite, SQS emulator)', () => {
  it('a window makes every stored row equal the CRM’s: changed rows, a deleted row ends deleted, a row created and never updated is found by its registered', async () => {
    const context = 'CustWin';
    seed(context, { contact: 5, person: 3, appointment: 2, sale: 1 });
    const rig = await reconcileRig(crm, receiver);
    await rig.enqueue(request(context, { reason: 'full', full: true }));
    await rig.runReconciles();
    await rig.drainWorkers();
    const afterFull = await compareRows(crm, receiver.store, context);
    expect(afterFull.stored).toEqual(afterFull.crm);
    const publishedBefore = rig.bus.published.length;

    // The outage: changes whose events were lost.
    const from = new Date(Date.now() - 1000);
    await new Promise((resolve) => setTimeout(resolve, 1100)); // the CRM's clock has seconds: changes after `from`
    crm.core.change(context, { op: 'change', table: 'contact', id: 1, fields: { department: 'Sales' } });
    crm.core.change(context, { op: 'change', table: 'person', id: 1, fields: { firstname: 'Ann' } });
    crm.core.change(context, { op: 'change', table: 'person', id: 1, fields: { firstname: 'Anna' } });
    crm.core.change(context, { op: 'delete', table: 'contact', id: 2 });
    const created = crm.core.change(context, { op: 'create', table: 'contact', fields: {} });
    const newId = Number(created.event?.primaryKey ?? 6);
    expect(crm.core.store.context(context).rows.contact?.[newId]?.updated).toBe(NEVER);

    await rig.enqueue(request(context, { reason: 'gap-closed', from: from.toISOString() }));
    await rig.runReconciles();
    await rig.drainWorkers();

    const after = await compareRows(crm, receiver.store, context);
    expect(after.stored).toEqual(after.crm);
    expect(await receiver.store.getRow(context, 'contact', 2)).toMatchObject({ status: 'deleted' });
    expect(await receiver.store.getRow(context, 'contact', newId)).toMatchObject({
      status: 'active',
      fieldValues: { updated: NEVER },
    });
    // One `*.reconciled` per row that differed, nothing for the others.
    const published = rig.bus.published.slice(publishedBefore).map((e) => {
      const detail = JSON.parse(e.Detail) as { Entity: string; PrimaryKey: number };
      return `${e.DetailType} ${detail.PrimaryKey}`;
    });
    expect(published.sort()).toEqual(
      ['contact.reconciled 1', 'contact.reconciled 2', `contact.reconciled ${newId}`, 'person.reconciled 1'].sort(),
    );
    const [completed] = rig.lifecycle.published.slice(-1).map((e) => ({ type: e.DetailType, detail: JSON.parse(e.Detail) }));
    expect(completed).toMatchObject({
      type: 'receiver.reconcile.completed',
      detail: { context, reason: 'gap-closed', rowsListed: 3, rowsChanged: 3, rowsDeleted: 1, from: from.toISOString() },
    });
    callsPerRow('window of 3 changed + 1 deleted rows', completed!.detail.apiCalls, completed!.detail);
    expect(crmWindowTime(from)).toBe(from.toISOString().slice(0, 19));
  });
});
