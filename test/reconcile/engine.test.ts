import { describe, expect, it } from 'vitest';
import { NEVER } from '../../tools/crm/tables.js';
import { simulator, systemUser } from '../crm-client/support.js';
import { compareRows, receiverAndSimulator, reconcileRig, request, subscribe } from './support.js';

const world = receiverAndSimulator();

/** Creates rows in the CRM: `count` of each table, with a name. */
function seed(context: string, tables: Record<string, number>) {
  for (const [table, count] of Object.entries(tables))
    for (let i = 1; i <= count; i++) world.crm.core.change(context, { op: 'create', table, fields: {} });
}

/**
 * The start of the next second, once it has come: a window from it holds what changes from now on and
 * nothing before (the CRM's filter is to the second: `afterTime` of the window's start rounded down).
 */
async function nextSecond(): Promise<Date> {
  const next = Math.ceil((Date.now() + 1) / 1000) * 1000;
  await new Promise((resolve) => setTimeout(resolve, next - Date.now() + 20));
  return new Date(next);
}

/** The rows reconciled over API calls, printed (the goal: at most 1.2 calls per reconciled row). */
function callsPerRow(label: string, calls: number, detail: { rowsListed: number; rowsDeleted: number }) {
  const rows = detail.rowsListed + detail.rowsDeleted;
  const ratio = rows === 0 ? Number.NaN : calls / rows;
  console.log(
    `[reconcile] ${label}: ${calls} API calls for ${rows} reconciled rows = ${ratio.toFixed(2)} per row`,
  );
  return ratio;
}

describe('a reconcile against the CRM simulator, applied by the real workers (dynalite, SQS emulator)', () => {
  it('a window makes every stored row equal the CRM’s: changed rows, a deleted row ends deleted, a row created and never updated is found by its registered', async () => {
    const context = 'CustWin';
    seed(context, { contact: 5, person: 3, appointment: 2, sale: 1 });
    await subscribe(world.crm, context, ['contact', 'person', 'activity', 'sale']);
    const rig = await reconcileRig(world.crm, world.receiver);
    await rig.enqueue(request(context, { reason: 'full', full: true }));
    await rig.runReconciles();
    await rig.drainWorkers();
    const afterFull = await compareRows(world.crm, world.receiver.store, context);
    expect(afterFull.stored).toEqual(afterFull.crm);
    const publishedBefore = rig.bus.published.length;

    // The outage: changes whose events were lost.
    const from = await nextSecond();
    world.crm.core.change(context, {
      op: 'change',
      table: 'contact',
      id: 1,
      fields: { department: 'Sales' },
    });
    world.crm.core.change(context, { op: 'change', table: 'person', id: 1, fields: { firstname: 'Ann' } });
    world.crm.core.change(context, { op: 'change', table: 'person', id: 1, fields: { firstname: 'Anna' } });
    world.crm.core.change(context, { op: 'delete', table: 'contact', id: 2 });
    const created = world.crm.core.change(context, { op: 'create', table: 'contact', fields: {} });
    const newId = Number(created.event?.primaryKey ?? 6);
    expect(world.crm.core.store.context(context).rows.contact?.[newId]?.updated).toBe(NEVER);

    await rig.enqueue(request(context, { reason: 'gap-closed', from: from.toISOString() }));
    await rig.runReconciles();
    await rig.drainWorkers();

    const after = await compareRows(world.crm, world.receiver.store, context);
    expect(after.stored).toEqual(after.crm);
    expect(await world.receiver.store.getRow(context, 'contact', 2)).toMatchObject({ status: 'deleted' });
    expect(await world.receiver.store.getRow(context, 'contact', newId)).toMatchObject({
      status: 'active',
      fieldValues: { updated: NEVER },
    });
    // One `*.reconciled` per row that differed, nothing for the others.
    const published = rig.bus.published.slice(publishedBefore).map((e) => {
      const detail = JSON.parse(e.Detail) as { Entity: string; PrimaryKey: number };
      return `${e.DetailType} ${detail.PrimaryKey}`;
    });
    expect(published.sort()).toEqual(
      [
        'contact.reconciled 1',
        'contact.reconciled 2',
        `contact.reconciled ${newId}`,
        'person.reconciled 1',
      ].sort(),
    );
    const [completed] = rig.lifecycle.published
      .slice(-1)
      .map((e) => ({ type: e.DetailType, detail: JSON.parse(e.Detail) }));
    expect(completed).toMatchObject({
      type: 'receiver.reconcile.completed',
      detail: {
        context,
        reason: 'gap-closed',
        rowsListed: 3,
        rowsChanged: 3,
        rowsDeleted: 1,
        from: from.toISOString(),
      },
    });
    callsPerRow('window of 3 changed + 1 deleted rows', completed!.detail.apiCalls, completed!.detail);
  }, 120_000);
});

describe('a reconcile paged across invocations', () => {
  it('with pages of 2 rows and one page per invocation loses and duplicates nothing, deletes included', async () => {
    const context = 'CustPage';
    seed(context, { contact: 7, person: 3 });
    const rig = await reconcileRig(world.crm, world.receiver, {
      limits: { pageSize: 2 },
      pagesPerInvocation: 1,
    });
    await rig.enqueue(request(context, { reason: 'full', full: true, entities: ['contact', 'person'] }));
    const invocations = await rig.runReconciles();
    await rig.drainWorkers();
    // contacts: 4 pages, persons: 2, then the deletes (nothing stored yet): one per invocation.
    expect(invocations).toBeGreaterThanOrEqual(6);
    expect(rig.applied.sort()).toEqual(
      [...[1, 2, 3, 4, 5, 6, 7].map((id) => `contact/${id}`), 'person/1', 'person/2', 'person/3'].sort(),
    );
    const full = await compareRows(world.crm, world.receiver.store, context);
    expect(full.stored).toEqual(full.crm);

    // Deleted on both sides of a page boundary, and the last row.
    for (const id of [2, 3, 7]) world.crm.core.change(context, { op: 'delete', table: 'contact', id });
    rig.applied.length = 0;
    const from = (await nextSecond()).toISOString();
    await rig.enqueue(request(context, { reason: 'poll', from, entities: ['contact', 'person'] }));
    expect(await rig.runReconciles()).toBeGreaterThanOrEqual(4);
    await rig.drainWorkers();
    expect(rig.applied.sort()).toEqual(['contact/2', 'contact/3', 'contact/7']);
    for (const id of [2, 3, 7])
      expect(await world.receiver.store.getRow(context, 'contact', id)).toMatchObject({ status: 'deleted' });
    const after = await compareRows(world.crm, world.receiver.store, context);
    expect(after.stored).toEqual(after.crm);
    const [completed] = rig.lifecycle.details().slice(-1);
    expect(completed).toMatchObject({ rowsListed: 0, rowsDeleted: 3 });
    expect(rig.lifecycle.published.map((e) => e.DetailType)).toEqual([
      'receiver.reconcile.completed',
      'receiver.reconcile.completed',
    ]);
  }, 120_000);
  it('against a CRM that answers full pages without odata.nextLink: every row listed, and the deletes cost one call per deleted row, not per stored row', async () => {
    const context = 'CustNoNext';
    seed(context, { contact: 9 });
    const rig = await reconcileRig(world.crm, world.receiver, {
      limits: { pageSize: 2 },
      // The simulator's answers, without their next link.
      wrapFetch: (real) => async (input, init) => {
        const response = await real(input, init);
        if (!String(input instanceof Request ? input.url : input).includes('/archive/dynamic'))
          return response;
        const { 'odata.nextLink': _, ...page } = (await response.json()) as Record<string, unknown>;
        return Response.json(page, {
          status: response.status,
          headers: { date: response.headers.get('date')! },
        });
      },
    });
    const entities = ['contact'];
    await rig.enqueue(request(context, { reason: 'full', full: true, entities }));
    await rig.runReconciles();
    await rig.drainWorkers();
    expect(rig.lifecycle.details().at(-1)).toMatchObject({ rowsListed: 9 });

    for (const id of [4, 8]) world.crm.core.change(context, { op: 'delete', table: 'contact', id });
    rig.calls.length = 0;
    await rig.enqueue(request(context, { reason: 'full', full: true, entities }));
    await rig.runReconciles();
    await rig.drainWorkers();
    expect(rig.lifecycle.details().at(-1)).toMatchObject({ rowsListed: 7, rowsDeleted: 2 });
    expect(rig.calls.filter((call) => /\/Contact\/\d+$/.test(call.path)).map((call) => call.path)).toEqual([
      `/${context}/api/v1/Contact/4`,
      `/${context}/api/v1/Contact/8`,
    ]);
    const after = await compareRows(world.crm, world.receiver.store, context);
    expect(after.stored).toEqual(after.crm);
  }, 120_000);
  it('against a CRM that ignores the key filter: the entity is left out in one line after two calls, not paged for ever, and the next entity converges', async () => {
    const context = 'CustNoFilter';
    seed(context, { contact: 5, person: 3 });
    const rig = await reconcileRig(world.crm, world.receiver, {
      limits: { pageSize: 2 },
      // The simulator asked without the key range: the same first rows, page after page.
      wrapFetch: (real) => async (input, init) => {
        const url = new URL(String(input instanceof Request ? input.url : input));
        const filter = (url.searchParams.get('$filter') ?? '').replace(
          /(^|\s+and\s+)\(contact\.contact_id (?:gt|le) \d+(?: and contact\.contact_id le \d+)?\)/,
          '',
        );
        if (filter === '') url.searchParams.delete('$filter');
        else url.searchParams.set('$filter', filter);
        return real(url, init);
      },
    });
    await rig.enqueue(request(context, { reason: 'full', full: true, entities: ['contact', 'person'] }));
    await rig.runReconciles();
    await rig.drainWorkers();

    const [completed] = rig.lifecycle.details();
    expect(completed).toMatchObject({ entities: ['contact', 'person'], rowsListed: 3 });
    expect((completed!.notReconciled as Record<string, string>).contact).toMatch(
      /^contact from the CRM's table contact \(key contact_id\): the archive's contact: the CRM answered the key 3 outside the keys asked for \(…, 2\]: it ignores the key filter, and paging would not end$/,
    );
    // contact: its first page and the check that found 3; person: [1, 2], its check, [3].
    expect(rig.calls.filter((call) => call.path.endsWith('/archive/dynamic'))).toHaveLength(2 + 3);
    expect(await world.receiver.store.getRow(context, 'contact', 1)).toBeUndefined();
    expect(await world.receiver.store.getRow(context, 'person', 3)).toMatchObject({ status: 'active' });
  }, 120_000);
});

describe('a reconcile under the CRM’s faults', () => {
  it('a tenant in maintenance, a 503 phase, 429s with Retry-After and a ticket that expires: it waits, resumes, and applies every row once', async () => {
    const faulty = await simulator({ auth: { ticketLifetimeMs: 1500 } });
    try {
      const context = 'CustFault';
      for (let i = 0; i < 6; i++)
        faulty.crm.core.change(context, { op: 'create', table: 'contact', fields: {} });
      for (let i = 0; i < 3; i++)
        faulty.crm.core.change(context, { op: 'create', table: 'person', fields: {} });
      await subscribe(faulty.crm, context, ['contact', 'person']);
      let stateCalls = 0;
      let archiveCalls = 0;
      let throttled = 0;
      const rig = await reconcileRig(faulty.crm, world.receiver, {
        credentials: systemUser(faulty.crm),
        limits: { pageSize: 2, maxAttempts: 2 },
        clientBudgetMs: 1000,
        wrapFetch: (real) => async (input, init) => {
          const url = new URL(String(input instanceof Request ? input.url : input));
          if (url.pathname.startsWith('/api/state/') && stateCalls++ === 0)
            return Response.json(
              { ContextIdentifier: context, State: 'OfflineMaintenance', IsRunning: false },
              { headers: { date: new Date().toUTCString() } },
            );
          if (url.pathname.endsWith('/archive/dynamic')) {
            archiveCalls++;
            if (archiveCalls === 2) faulty.crm.faults.set({ unavailableUntil: Date.now() + 2500 });
            if (archiveCalls === 5) faulty.crm.faults.set({ rateLimitPerSecond: 1 });
          }
          const response = await real(input, init);
          if (response.status === 429 && ++throttled === 2) faulty.crm.faults.set({});
          return response;
        },
      });
      await rig.enqueue(
        request(context, { reason: 'manual', from: new Date(Date.now() - 60_000).toISOString() }),
      );
      await rig.runReconciles();
      await rig.drainWorkers();

      const statuses = rig.calls.map(
        (call) => `${call.path.includes('Login') ? 'login' : call.path.split('/').pop()} ${call.status}`,
      );
      expect(statuses).toContain('dynamic 503');
      expect(statuses).toContain('dynamic 429');
      // The ticket expired while the run waited: one 401, a new login, and on.
      const unauthorized = statuses.indexOf('dynamic 401');
      expect(unauthorized).toBeGreaterThan(0);
      expect(statuses[unauthorized + 1]).toBe('login 200');
      // Maintenance (60 s) and the 503 phase were waited out by hiding the message, not by failing it.
      expect(rig.results.filter((r) => r.startsWith('hide')).length).toBeGreaterThanOrEqual(2);
      expect(rig.results).toContain('hide 60');
      // Every row once, all of them equal to the CRM's.
      expect(rig.applied.sort()).toEqual(
        [...[1, 2, 3, 4, 5, 6].map((id) => `contact/${id}`), 'person/1', 'person/2', 'person/3'].sort(),
      );
      const after = await compareRows(faulty.crm, world.receiver.store, context);
      expect(after.stored).toEqual(after.crm);
      expect(rig.lifecycle.published.map((e) => e.DetailType)).toEqual(['receiver.reconcile.completed']);
      const [completed] = rig.lifecycle.details();
      expect(completed).toMatchObject({
        rowsListed: 9,
        rowsChanged: 9,
        rowsDeleted: 0,
        apiCalls: rig.calls.length,
      });
      callsPerRow('9 rows under faults, pages of 2', rig.calls.length, completed as never);
    } finally {
      await faulty.stop();
    }
  }, 120_000);
});

describe('a reconcile that cannot succeed', () => {
  it('is retried by the queue, then lands in the reconcile DLQ, and the last attempt publishes receiver.reconcile.failed (one line, no credentials)', async () => {
    const context = 'CustFail';
    seed(context, { contact: 1 });
    const rig = await reconcileRig(world.crm, world.receiver, {
      credentials: { type: 'basic', user: 'crm', password: 'not-the-password' },
      maxReceives: 2,
      visibilitySeconds: 1,
      expectFailures: true,
    });
    await rig.enqueue(request(context, { from: new Date(Date.now() - 60_000).toISOString() }));
    expect(await rig.runReconciles()).toBe(2);

    const dead = await rig.dlq();
    expect(dead.map((m) => JSON.parse(m.Body!).context)).toEqual([context]);
    expect(rig.lifecycle.published.map((e) => e.DetailType)).toEqual(['receiver.reconcile.failed']);
    const [failed] = rig.lifecycle.details();
    expect(failed).toMatchObject({
      context,
      reason: 'manual',
      error: expect.stringMatching(/^CrmAuthError: .*401/),
    });
    expect(JSON.stringify(failed)).not.toContain('not-the-password');
    expect(String(failed!.error)).not.toContain('\n');
    expect(await world.receiver.store.getRow(context, 'contact', 1)).toBeUndefined();
  }, 120_000);
});

describe('API calls per reconciled row (printed; the issue’s goal is at most 1.2)', () => {
  it('a full pass of 250 rows and then a window of 50 changed and 3 deleted rows converge, with their calls per row printed', async () => {
    const context = 'CustScale';
    seed(context, { contact: 200, person: 50 });
    const rig = await reconcileRig(world.crm, world.receiver);
    const entities = ['contact', 'person'];
    await rig.enqueue(request(context, { reason: 'full', full: true, entities }));
    await rig.runReconciles();
    await rig.drainWorkers();
    const full = rig.lifecycle.details().at(-1) as {
      rowsListed: number;
      rowsDeleted: number;
      apiCalls: number;
    };
    expect(full).toMatchObject({ rowsListed: 250, rowsDeleted: 0 });
    callsPerRow('full pass of 250 rows', full.apiCalls, full);

    const from = await nextSecond();
    for (let id = 1; id <= 40; id++)
      world.crm.core.change(context, {
        op: 'change',
        table: 'contact',
        id: id * 5,
        fields: { department: `D${id}` },
      });
    for (let id = 1; id <= 10; id++)
      world.crm.core.change(context, { op: 'change', table: 'person', id, fields: { firstname: `F${id}` } });
    for (const id of [3, 101, 199]) world.crm.core.change(context, { op: 'delete', table: 'contact', id });
    await rig.enqueue(request(context, { reason: 'gap-closed', from: from.toISOString(), entities }));
    await rig.runReconciles();
    await rig.drainWorkers();
    const window = rig.lifecycle.details().at(-1) as {
      rowsListed: number;
      rowsDeleted: number;
      apiCalls: number;
    };
    expect(window).toMatchObject({ rowsListed: 50, rowsDeleted: 3 });
    const after = await compareRows(world.crm, world.receiver.store, context);
    expect(after.stored).toEqual(after.crm);
    expect(
      callsPerRow('window of 50 changed + 3 deleted among 250', window.apiCalls, window),
    ).toBeLessThanOrEqual(1.2);
  }, 120_000);
});

describe('deletes found while the CRM throttles', () => {
  it('sends the deletes confirmed before a 429 and resumes after the last stored row compared: each deleted row once', async () => {
    const context = 'CustDel';
    seed(context, { contact: 8 });
    const rig = await reconcileRig(world.crm, world.receiver, { clientBudgetMs: 500 });
    await rig.enqueue(request(context, { reason: 'full', full: true, entities: ['contact'] }));
    await rig.runReconciles();
    await rig.drainWorkers();
    for (const id of [2, 4, 5, 7]) world.crm.core.change(context, { op: 'delete', table: 'contact', id });
    rig.applied.length = 0;
    world.crm.faults.set({ rateLimitPerSecond: 2 });
    try {
      const from = (await nextSecond()).toISOString();
      await rig.enqueue(request(context, { from, entities: ['contact'] }));
      // One getRow per second gets through: without resuming inside the page it would never end.
      console.log(`[reconcile] deletes under 429s: ${await rig.runReconciles(3_000, 30)} invocations`);
    } finally {
      world.crm.faults.set({});
    }
    await rig.drainWorkers();
    expect(rig.calls.some((call) => call.status === 429)).toBe(true);
    expect(rig.applied.sort()).toEqual(['contact/2', 'contact/4', 'contact/5', 'contact/7']);
    const after = await compareRows(world.crm, world.receiver.store, context);
    expect(after.stored).toEqual(after.crm);
    expect(rig.lifecycle.details().at(-1)).toMatchObject({ rowsDeleted: 4 });
  }, 120_000);
});

describe('rows deleted while a listing is paged', () => {
  it('shift no page: every changed row still listed is sent once (pages follow the key, not an offset)', async () => {
    const context = 'CustShift';
    seed(context, { contact: 6 });
    let archiveCalls = 0;
    const rig = await reconcileRig(world.crm, world.receiver, {
      limits: { pageSize: 2 },
      pagesPerInvocation: 1,
      wrapFetch: (real) => async (input, init) => {
        const response = await real(input, init);
        // After the first page of the changed contacts (1, 2): both deleted in the CRM.
        if (String(input).includes('/archive/dynamic') && ++archiveCalls === 1) {
          world.crm.core.change(context, { op: 'delete', table: 'contact', id: 1 });
          world.crm.core.change(context, { op: 'delete', table: 'contact', id: 2 });
        }
        return response;
      },
    });
    await rig.enqueue(request(context, { reason: 'full', full: true, entities: ['contact'] }));
    await rig.runReconciles();
    await rig.drainWorkers();
    expect(rig.applied.sort()).toEqual([1, 2, 3, 4, 5, 6].map((id) => `contact/${id}`));
    for (const id of [3, 4, 5, 6])
      expect(await world.receiver.store.getRow(context, 'contact', id)).toMatchObject({ status: 'active' });
  }, 120_000);
});
