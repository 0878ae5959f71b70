import { describe, expect, it } from 'vitest';
import { createRecoveryStore, type ReconcileOutcome } from '../../lib/store/index.js';
import { receiverAndSimulator, reconcileRig, request } from './support.js';

/**
 * A run that names a webhook records its state on the webhook's recovery item (what the gap's card
 * shows): running from its first invocation, then completed with its counts or, on its last attempt,
 * failed with its one-line error. Against the CRM simulator, dynalite and the SQS emulator.
 */
const world = receiverAndSimulator();

const minuteAgo = () => new Date(Date.now() - 60_000).toISOString();
const recoveryOf = async (context: string) => world.receiver.store.listRecoveries(context);

/** The real store, with each status it is asked to record listed. */
function recordingStore(statuses: string[]) {
  const real = createRecoveryStore(world.receiver.dynamo.doc, world.receiver.tables.webhooks);
  return {
    recordReconcile(context: string, webhookId: number, outcome: ReconcileOutcome) {
      statuses.push(outcome.status);
      return real.recordReconcile(context, webhookId, outcome);
    },
  };
}

describe('a reconcile naming a webhook, on the webhook’s recovery item', () => {
  it('completed: its trigger, window, counts and API calls as receiver.reconcile.completed says, and when', async () => {
    const context = 'CustRec1';
    for (let i = 0; i < 3; i++)
      world.crm.core.change(context, { op: 'create', table: 'contact', fields: {} });
    const events = ['contact.created', 'quote.approved'];
    await world.crm.core.register(context, { name: 'receiver', events, targetUrl: 'http://127.0.0.1:9/' });
    const statuses: string[] = [];
    const rig = await reconcileRig(world.crm, world.receiver, { recovery: recordingStore(statuses) });
    const gapOpened = request(context, { reason: 'gap-opened', from: minuteAgo(), webhookId: 9 });
    await rig.enqueue(gapOpened);
    await rig.enqueue(request('CustRec1b', { from: minuteAgo() })); // manual, no webhook: nothing recorded
    await rig.runReconciles();

    const completed = rig.lifecycle.details().find((d) => d.context === context)!;
    const [recovery] = await recoveryOf(context);
    expect(statuses).toEqual(['running', 'completed']);
    expect(recovery).toEqual({
      context,
      webhookId: 9,
      reconcile: {
        status: 'completed',
        reason: 'gap-opened',
        requestedAt: gapOpened.requestedAt,
        startedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        from: gapOpened.from,
        to: completed.to,
        at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        rowsListed: 3,
        rowsChanged: completed.rowsChanged,
        rowsDeleted: 0,
        apiCalls: completed.apiCalls,
        durationMs: completed.durationMs,
        notReconciled: completed.notReconciled,
      },
    });
    expect(recovery!.reconcile!.notReconciled).toMatchObject({ quote: expect.any(String) });
    expect(Date.parse(recovery!.reconcile!.at)).toBeGreaterThanOrEqual(Date.parse(gapOpened.requestedAt));
    expect(await recoveryOf('CustRec1b')).toEqual([]);
  }, 60_000);

  it('ordered by when each run started: a person’s request (its time rounded to the minute) after a gap’s is the one shown', async () => {
    const context = 'CustRec4';
    world.crm.core.change(context, { op: 'create', table: 'contact', fields: {} });
    const rig = await reconcileRig(world.crm, world.receiver);
    const now = Date.now();
    const gapClosed = request(context, {
      reason: 'gap-closed',
      from: minuteAgo(),
      webhookId: 9,
      requestedAt: new Date(now).toISOString(),
    });
    const manual = request(context, {
      from: minuteAgo(),
      webhookId: 9,
      requestedAt: new Date(Math.floor(now / 60_000) * 60_000).toISOString(),
    });
    await rig.enqueue(gapClosed);
    await rig.enqueue(manual);
    await rig.runReconciles();

    expect((await recoveryOf(context))[0]?.reconcile).toMatchObject({
      status: 'completed',
      reason: 'manual',
      requestedAt: manual.requestedAt,
    });
  }, 60_000);

  it('failed: on its last attempt, with the error in one line and no credentials', async () => {
    const context = 'CustRec2';
    world.crm.core.change(context, { op: 'create', table: 'contact', fields: {} });
    const statuses: string[] = [];
    const rig = await reconcileRig(world.crm, world.receiver, {
      credentials: { type: 'basic', user: 'crm', password: 'not-the-password' },
      maxReceives: 2,
      visibilitySeconds: 1,
      expectFailures: true,
      recovery: recordingStore(statuses),
    });
    await rig.enqueue(request(context, { reason: 'poll', from: minuteAgo(), webhookId: 4 }));
    expect(await rig.runReconciles()).toBe(2);

    expect(statuses).toEqual(['running', 'running', 'failed']);
    const reconcile = (await recoveryOf(context))[0]?.reconcile;
    expect(reconcile).toMatchObject({
      status: 'failed',
      reason: 'poll',
      error: rig.lifecycle.details()[0]?.error,
    });
    expect(reconcile?.error).toMatch(/^CrmAuthError: .*401/);
    expect(reconcile?.error).not.toMatch(/\n|not-the-password/);
  }, 60_000);

  it('a store that fails to record costs the record only: the run completes and is not retried', async () => {
    const context = 'CustRec3';
    world.crm.core.change(context, { op: 'create', table: 'contact', fields: {} });
    const rig = await reconcileRig(world.crm, world.receiver, {
      recovery: {
        recordReconcile: async () => {
          throw new Error('ProvisionedThroughputExceededException: slow down');
        },
      },
    });
    await rig.enqueue(request(context, { reason: 'gap-closed', from: minuteAgo(), webhookId: 9 }));

    expect(await rig.runReconciles()).toBe(1);
    expect(rig.lifecycle.published.map((e) => e.DetailType)).toEqual(['receiver.reconcile.completed']);
  }, 60_000);
});
