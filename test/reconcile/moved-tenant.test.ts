import { describe, expect, it } from 'vitest';
import { setTenantStatus } from '../../tools/crm/tenant-state.js';
import { compareRows, receiverAndSimulator, reconcileRig, request, subscribe } from './support.js';

const started = receiverAndSimulator();

/** Two contacts and a person of `context` in the CRM, and the receiver's webhook naming them. */
async function tenantWithRows(context: string) {
  const { crm } = started;
  for (const id of [1, 2]) crm.core.change(context, { op: 'create', table: 'contact', id });
  crm.core.change(context, { op: 'create', table: 'person', id: 1 });
  await subscribe(crm, context, ['contact', 'person']);
}

/** The tenant's API moved to a new host (`npm run crm -- tenant move`): its old address answers 421. */
const move = (context: string) => setTenantStatus(started.crm.core.store.context(context), undefined, true);

describe('a reconcile of a tenant that moved', () => {
  it('calls the tenant where its state says, and converges: no table left out, nothing failed', async () => {
    const { receiver, crm } = started;
    const context = 'CustMoved';
    await tenantWithRows(context);
    move(context);
    const rig = await reconcileRig(crm, receiver);
    await rig.enqueue(request(context, { reason: 'full', full: true }));
    await rig.runReconciles();
    await rig.drainWorkers();

    const rows = await compareRows(crm, receiver.store, context);
    expect(rows.stored).toEqual(rows.crm);
    expect(Object.keys(rows.crm)).toHaveLength(3);
    expect(await rig.dlq()).toEqual([]);
    const [completed] = rig.lifecycle.details() as Array<{ notReconciled?: unknown }>;
    expect(rig.lifecycle.published.map((e) => e.DetailType)).toEqual(['receiver.reconcile.completed']);
    expect(completed?.notReconciled ?? {}).toEqual({});
    const api = rig.calls.filter((call) => call.path.includes('/api/v1/'));
    expect(api.length).toBeGreaterThan(0);
    for (const call of api) expect(call.path, call.path).toMatch(new RegExp(`^/h2/${context}/api/v1/`));
  });

  it('moved in the middle of a run: the 421 of its old host is a retry later that reads its state again, and the run converges at the new host', async () => {
    const { receiver, crm } = started;
    const context = 'CustMovedMidRun';
    await tenantWithRows(context);
    let moved = false;
    const rig = await reconcileRig(crm, receiver, {
      // The tenant moves after the run read its state, just before its first listing.
      wrapFetch: (real) => async (input, init) => {
        if (!moved && String(input).includes('/archive/')) {
          moved = true;
          move(context);
        }
        return real(input, init);
      },
    });
    await rig.enqueue(request(context, { reason: 'full', full: true }));
    await rig.runReconciles(6_000);
    await rig.drainWorkers();

    const rows = await compareRows(crm, receiver.store, context);
    expect(rows.stored).toEqual(rows.crm);
    expect(Object.keys(rows.crm)).toHaveLength(3);
    expect(await rig.dlq()).toEqual([]);
    // One 421 at the old host, the state read again, the request hidden 5 s, then the new host.
    expect(rig.calls.filter((call) => call.status === 421)).toHaveLength(1);
    expect(rig.results).toContain('hide 5');
    const [completed] = rig.lifecycle.details() as Array<{ notReconciled?: unknown }>;
    expect(rig.lifecycle.published.map((e) => e.DetailType)).toEqual(['receiver.reconcile.completed']);
    expect(completed?.notReconciled ?? {}).toEqual({});
  }, 30_000);
});
