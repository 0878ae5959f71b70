import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ReconcileRequest } from '../../lib/reconcile/request.js';
import { NO_COUNTS } from '../../lib/reconcile/run/cursor.js';
import { reconcileRig, request, startProxiedCrm } from './support.js';

let world: Awaited<ReturnType<typeof startProxiedCrm>>;

beforeAll(async () => {
  world = await startProxiedCrm();
});
afterAll(() => world?.close());

const WEBHOOK_ID = 3;
const entities = ['contact'];

/** The archive's listing of ids (only the key selected), as the client asks for it. */
const isIdListing = (url: URL) =>
  url.pathname.endsWith('/archive/dynamic') && url.searchParams.get('$select') === 'contact.contact_id';
const isRowCheck = (url: URL) => /\/api\/v1\/Contact\/\d+$/.test(url.pathname);

/** `count` contacts in the CRM, reconciled into the receiver through the server of the test's own. */
async function stored(context: string, count: number, keepMissing?: number) {
  for (let id = 1; id <= count; id++) world.crm.core.change(context, { op: 'create', table: 'contact', id });
  const rig = await reconcileRig(world.crm, world.receiver, {
    apiUrl: world.proxy.apiUrl,
    ...(keepMissing !== undefined && { keepMissing }),
  });
  await reconcile(rig, context);
  return rig;
}

/** A full reconcile of `entities` (the request's other `fields` over it), run to its end and applied. */
async function reconcile(
  rig: Awaited<ReturnType<typeof reconcileRig>>,
  context: string,
  fields: Partial<ReconcileRequest> = {},
) {
  await rig.enqueue(
    request(context, { reason: 'manual', full: true, entities, webhookId: WEBHOOK_ID, ...fields }),
  );
  await rig.runReconciles();
  await rig.drainWorkers();
  const completed = rig.lifecycle.details().at(-1);
  const [recovery] = await world.receiver.store.listRecoveries(context);
  return { completed, card: recovery?.reconcile };
}

async function statuses(context: string, ids: readonly number[]) {
  return Promise.all(
    ids.map(async (id) => (await world.receiver.store.getRow(context, 'contact', id))?.status),
  );
}

/** A cursor of a run of contact that started now, in its deletes phase, with `fields`. */
function deletesCursor(fields: object) {
  const now = new Date().toISOString();
  return {
    startedAt: now,
    to: now,
    entities,
    entity: 0,
    phase: 'deletes',
    counters: { ...NO_COUNTS },
    ...fields,
  };
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('a cap on the deletes of a run (a real server in front of the simulator)', () => {
  it('a CRM that lists no ids and answers 404 to each row: no row deleted or erased, the entity not reconciled with why', async () => {
    const context = 'CustNoIds';
    const rig = await stored(context, 30);
    world.proxy.options.answer = (url) => {
      if (isIdListing(url)) return { status: 200, body: { value: [] } };
      if (isRowCheck(url)) return { status: 404, body: { Error: 'not found' } };
      return undefined;
    };
    const before = await world.receiver.store.getRow(context, 'contact', 7);
    rig.calls.length = 0;
    const addMetric = vi.spyOn(Metrics.prototype, 'addMetric');
    const warn = vi.spyOn(Logger.prototype, 'warn');
    try {
      const { completed, card } = await reconcile(rig, context);

      const why =
        /^30 of its 30 stored rows are not in the CRM's list of ids, more than a run deletes \(10: RECONCILE_MAX_DELETES, RECONCILE_MAX_DELETES_PERCENT\): none deleted; .* maxDeletes=30$/;
      expect(completed).toMatchObject({
        rowsDeleted: 0,
        notReconciled: { contact: expect.stringMatching(why) },
      });
      expect(card).toMatchObject({
        status: 'completed',
        notReconciled: { contact: expect.stringMatching(why) },
        deletesHeld: { contact: 30 },
      });
      expect(await statuses(context, range(1, 30))).toEqual(range(1, 30).map(() => 'active'));
      const after = await world.receiver.store.getRow(context, 'contact', 7);
      expect(after?.fieldValues).toEqual(before?.fieldValues);
      expect(Object.keys(after?.fieldValues ?? {}).length).toBeGreaterThan(5);
      // Held before any row check: not one call per stored row to a CRM that cannot be trusted.
      expect(rig.calls.filter((call) => /\/Contact\/\d+$/.test(call.path))).toEqual([]);
      expect(addMetric.mock.calls.filter(([name]) => name === 'ReconcileDeletesHeld')).toHaveLength(1);
      expect(warn.mock.calls.map(([line]) => String(line))).toContainEqual(
        expect.stringMatching(/^reconcile held the deletes of contact: 30 of its 30 stored rows/),
      );
    } finally {
      addMetric.mockRestore();
      warn.mockRestore();
      world.proxy.options.answer = undefined;
    }
  }, 120_000);

  it('a normal delete of a few rows still applies, a mass delete is held until asked with maxDeletes', async () => {
    const context = 'CustFewGone';
    const rig = await stored(context, 30);
    for (const id of [3, 17]) world.crm.core.change(context, { op: 'delete', table: 'contact', id });

    rig.calls.length = 0;
    let idListings = 0;
    world.proxy.options.answer = (url) => {
      if (isIdListing(url)) idListings++;
      return undefined;
    };
    const few = await reconcile(rig, context).finally(() => {
      world.proxy.options.answer = undefined;
    });

    expect(few.completed).toMatchObject({ rowsDeleted: 2, notReconciled: {} });
    expect(await statuses(context, [3, 17, 4])).toEqual(['deleted', 'deleted', 'active']);
    // The ids listed once: the count kept the two missing rows, each then confirmed by its own call.
    expect(idListings).toBe(1);
    const paths = rig.calls.map((call) => call.path);
    expect(paths.filter((path) => /\/Contact\/\d+$/.test(path))).toEqual([
      `/${context}/api/v1/Contact/3`,
      `/${context}/api/v1/Contact/17`,
    ]);

    for (const id of range(18, 30)) world.crm.core.change(context, { op: 'delete', table: 'contact', id });
    const many = await reconcile(rig, context);
    expect(many.completed).toMatchObject({
      rowsDeleted: 0,
      notReconciled: { contact: expect.stringMatching(/^13 of its 28 stored rows .*maxDeletes=13$/) },
    });
    // The gap's card gets the count with the reason: the maxDeletes its action asks for.
    expect(many.card?.deletesHeld).toEqual({ contact: 13 });
    expect(await statuses(context, range(18, 30))).toEqual(range(18, 30).map(() => 'active'));

    const asked = await reconcile(rig, context, { maxDeletes: 13 });
    expect(asked.completed).toMatchObject({ rowsDeleted: 13, notReconciled: {} });
    expect(asked.card?.deletesHeld).toBeUndefined();
    expect(await statuses(context, range(18, 30))).toEqual(range(18, 30).map(() => 'deleted'));
  }, 120_000);

  it("a run asked with a maxDeletes smaller than the rows missing holds them with a line naming that maxDeletes, not the stage's cap", async () => {
    const context = 'CustAskedTooFew';
    const rig = await stored(context, 30);
    for (const id of range(18, 30)) world.crm.core.change(context, { op: 'delete', table: 'contact', id });

    const { completed, card } = await reconcile(rig, context, { maxDeletes: 5 });

    expect(completed).toMatchObject({
      rowsDeleted: 0,
      notReconciled: {
        contact:
          "13 of its 30 stored rows are not in the CRM's list of ids, more than this run's maxDeletes (5) allows: none deleted; if the CRM did delete them, reconcile it again with maxDeletes=13",
      },
    });
    expect(card?.deletesHeld).toEqual({ contact: 13 });
    expect(await statuses(context, range(18, 30))).toEqual(range(18, 30).map(() => 'active'));
  }, 120_000);

  it("a person's run with maxDeletes is not superseded by a newer run of the same window without it: the held rows are deleted", async () => {
    const context = 'CustAskedThenPolled';
    await stored(context, 30);
    for (const id of range(18, 30)) world.crm.core.change(context, { op: 'delete', table: 'contact', id });
    // One page per invocation: the person's run carries on, and the poll's run starts meanwhile.
    const rig = await reconcileRig(world.crm, world.receiver, {
      apiUrl: world.proxy.apiUrl,
      pagesPerInvocation: 1,
    });
    const window = { full: true, entities, webhookId: WEBHOOK_ID };
    const earlier = new Date(Date.now() - 1000).toISOString();
    await rig.enqueue(
      request(context, { ...window, reason: 'manual', maxDeletes: 13, requestedAt: earlier }),
    );
    await rig.enqueue(request(context, { ...window, reason: 'poll' }));

    await rig.runReconciles();
    await rig.drainWorkers();

    expect(await statuses(context, range(18, 30))).toEqual(range(18, 30).map(() => 'deleted'));
    expect(rig.lifecycle.details().map((detail) => detail.rowsDeleted)).toContain(13);
  }, 120_000);

  it('a run whose kept missing rows were deleted since its count (a live delete, another run, a message redelivered) checks the store again: no CRM call, none counted deleted twice', async () => {
    const context = 'CustKeptGone';
    const rig = await stored(context, 30);
    for (const id of range(18, 30)) world.crm.core.change(context, { op: 'delete', table: 'contact', id });
    // Another run deleted them after this run's count, which kept their keys in its cursor.
    expect((await reconcile(rig, context, { maxDeletes: 13 })).completed).toMatchObject({ rowsDeleted: 13 });
    const counted = deletesCursor({ deletes: { stored: 30, missing: 0, allowed: 13, keys: range(18, 30) } });
    rig.calls.length = 0;

    await rig.enqueue(request(context, { reason: 'manual', full: true, entities, cursor: counted }));
    await rig.runReconciles();

    expect(rig.lifecycle.details().at(-1)).toMatchObject({ rowsDeleted: 0 });
    expect(rig.calls.map((call) => call.path).filter((path) => /\/Contact\/\d+$/.test(path))).toEqual([]);
  }, 120_000);

  it('a run queued by an older version in its deletes phase (no count in its cursor) counts first, then deletes', async () => {
    const context = 'CustOldCursor';
    const rig = await stored(context, 30);
    for (const id of [5, 9]) world.crm.core.change(context, { op: 'delete', table: 'contact', id });
    const { completed } = await reconcile(rig, context, { cursor: deletesCursor({ after: 4 }) });

    expect(completed).toMatchObject({ rowsDeleted: 2, notReconciled: {} });
    expect(await statuses(context, [5, 9, 4])).toEqual(['deleted', 'deleted', 'active']);
  }, 120_000);

  it('more missing rows than a count keeps are listed again: a CRM whose second listing names fewer ids than the first has no row deleted past the count', async () => {
    const context = 'CustFlip';
    const rig = await stored(context, 30, 0);
    world.crm.core.change(context, { op: 'delete', table: 'contact', id: 5 });
    let listings = 0;
    world.proxy.options.answer = (url) => {
      if (!isIdListing(url) || listings++ === 0) return undefined;
      return { status: 200, body: { value: [] } };
    };
    try {
      const { completed, card } = await reconcile(rig, context);

      expect(completed).toMatchObject({
        rowsDeleted: 0,
        notReconciled: { contact: expect.stringMatching(/^listed again, .*: no more deleted$/) },
      });
      // The rows the second listing left out before the run stopped (all 30: it names none).
      expect(card?.deletesHeld).toEqual({ contact: 30 });
      expect(await statuses(context, range(1, 30))).toEqual(range(1, 30).map(() => 'active'));
    } finally {
      world.proxy.options.answer = undefined;
    }
  }, 120_000);
});
