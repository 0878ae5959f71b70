import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { CallCounts } from '../../tools/crm/calls.js';
import type { Change } from '../../tools/crm/changes.js';
import { type RunningCrm, startCrm } from '../../tools/crm/start.js';
import { type Row as CrmRow, tableOf } from '../../tools/crm/tables.js';
import type { Webhook } from '../../tools/crm/webhooks.js';
import {
  queues,
  type RowState,
  readRow,
  rowDifferences,
  sameRow,
  settled,
  startSubscriber,
} from '../support/convergence.js';
import { freePort, type RuntimeProcess, spawnLocalRuntime } from '../support/local-runtime.js';
import { startSkewedCrm } from '../support/skewed-crm.js';

/**
 * Reconciliation's proof: `npm start` and the CRM simulator (`startCrm`, the real sender's policy: 3
 * attempts, discard, TooManyErrors after 9 failures), the receiver killed for 20 s while the CRM keeps
 * changing rows of four entities, a list and a custom table; changes, deletes and creates while the webhook is disabled, a row
 * changed twice, a change that raises no event. Then the receiver returns on the same DATA_DIR and,
 * with nobody touching the CRM, must bring its webhook back to Active and converge: every row as the
 * CRM has it, field by field, deleted rows `deleted`; a subscriber gets one `<entity>.reconciled` per
 * row that differed and none for the others. Prints the time to convergence and the API calls per
 * reconciled row (goals: 60 s, 1.2); bounded, and the runtime is killed whatever happens. The CRM
 * refuses one table the webhook delivers (403: an app without rights to it): a run leaves it out,
 * says so with the CRM's answer, and every other table converges. The CRM's API answers through a
 * server of the test's own whose Date header is 10 minutes ahead through the recovery (the gap's card
 * says so), then 10 minutes behind: live changes after the recovery are applied, and a reconcile then
 * brings every value.
 */
const CONTEXT = 'CustConverge';
const SECRET = 'converge-secret';
const TOKEN = 'converge-state-token';
const OUTAGE_MS = 20_000;
const POLL_SECONDS = 10;
/** The CRM tables of the test and the entity of their rows in the receiver. */
const TABLES = ['contact', 'person', 'appointment', 'sale', 'category', 'y_equipment'] as const;
type TableName = (typeof TABLES)[number];
/** Rows 1-6 of each table exist before the outage; 7 and 8 are created in the gap. */
const IDS = [1, 2, 3, 4, 5, 6, 7, 8];
/**
 * Own fields (a change raises an event) the stream edits, per table: a number among those the
 * webhooks' FieldValues carry (the receiver holds it), and a text it never holds (only `updated`
 * moves, and not even that for a sale, whose FieldValues have no `updated`). A list's and a custom
 * table's FieldValues carry both (the custom table's typed: its price stays a number, `[F:…]`).
 */
const FIELDS: Record<TableName, [string, string]> = {
  contact: ['category_idx', 'department'],
  person: ['associate_id', 'firstname'],
  appointment: ['task_idx', 'location'],
  sale: ['amount', 'heading'],
  category: ['Rank', 'Name'],
  y_equipment: ['x_price', 'x_name'],
};
/** Fields the stream sets to a number (the others to a text). */
const NUMBERS = new Set(['amount', 'Rank', 'x_price']);
/** A table whose events the webhook delivers but whose rows the CRM's API refuses (403), and a field of it. */
const REFUSED = { table: 'project', field: 'status' } as const;
/** Tables whose rows can be deleted (a list's entries are soft deleted only). */
const DELETABLE = TABLES.filter((table) => tableOf(table).verbs.includes('deleted'));

let root: string;
let crm: RunningCrm;
let recorder: Awaited<ReturnType<typeof startSubscriber>>;
let proxy: Awaited<ReturnType<typeof startSkewedCrm>>;
const MINUTES_10 = 600_000;
let runtime: RuntimeProcess | undefined;

const entityOf = (table: TableName) => tableOf(table).entity;
const crmRow = (table: TableName, id: number): CrmRow | undefined =>
  crm.core.store.context(CONTEXT).rows[table]?.[id];
const change = (op: Change) => crm.core.change(CONTEXT, op);
const key = (table: TableName, id: number) => `${entityOf(table)}/${id}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (line: string) => console.log(`convergence: ${line}`);

/** Every row of the test, as the receiver's admin API shows it. */
async function receiverRows(adminUrl: string): Promise<Map<string, RowState | undefined>> {
  const rows = new Map<string, RowState | undefined>();
  for (const table of TABLES)
    for (const id of IDS) rows.set(key(table, id), await readRow(adminUrl, CONTEXT, entityOf(table), id));
  return rows;
}

/** The rows whose receiver state differs from the CRM's, with how. */
async function differences(adminUrl: string): Promise<string[]> {
  const found: string[] = [];
  for (const table of TABLES)
    for (const id of IDS) {
      const row = await readRow(adminUrl, CONTEXT, entityOf(table), id);
      const how = rowDifferences(row, crmRow(table, id));
      if (how.length > 0) found.push(`${key(table, id)}: ${how.join('; ')}`);
    }
  return found;
}

const callsSince = (before: CallCounts): CallCounts => {
  const now = crm.calls.of(CONTEXT);
  const byKind = Object.fromEntries(
    Object.entries(now.byKind)
      .map(([kind, count]) => [kind, count - (before.byKind[kind] ?? 0)] as const)
      .filter(([, count]) => count > 0),
  );
  return { total: now.total - before.total, byKind };
};

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'crm-converge-'));
  recorder = await startSubscriber();
  crm = await startCrm({ dataDir: join(root, 'crm'), faults: { refusedTables: { [REFUSED.table]: 403 } } });
  proxy = await startSkewedCrm(crm.url, { skewMs: MINUTES_10 });
}, 30_000);

afterAll(async () => {
  await runtime?.kill();
  await proxy?.close();
  await crm?.stop();
  await recorder?.close();
  rmSync(root, { recursive: true, force: true });
}, 30_000);

it("converges after 20 s down and a disabled webhook: webhook Active again, every row the CRM's, one reconciled per row that differed", async () => {
  // Arrange: the receiver, its two webhooks in the CRM (rows, and the rows webhook's state events).
  const port = await freePort();
  const adminPort = await freePort();
  const subscriptions = join(root, 'subscriptions.yml');
  writeFileSync(
    subscriptions,
    `- name: reconciled
  pattern: { detail-type: [{ suffix: .reconciled }] }
  target: { url: "${recorder.url}/reconciled" }
- name: lifecycle
  pattern: { detail-type: [{ prefix: receiver. }] }
  target: { url: "${recorder.url}/lifecycle" }
`,
  );
  const start = () =>
    spawnLocalRuntime({
      dataDir: join(root, 'data'),
      port,
      adminPort,
      readyTimeoutMs: 60_000,
      env: {
        WEBHOOK_SECRET: SECRET,
        STATE_EVENT_TOKEN: TOKEN,
        SUBSCRIPTIONS_FILE: subscriptions,
        ENTITIES: 'contact,person,activity,sale,project,list.category,y_equipment',
        CRM_API_URL: proxy.apiUrl,
        CRM_CREDENTIALS: JSON.stringify({ '*': { type: 'basic', user: 'crm', password: 'crm' } }),
        RECONCILE_POLL_SECONDS: String(POLL_SECONDS),
        LOCAL_BUS_BACKOFF_MS: '20',
      },
    });
  runtime = await start();
  const { adminUrl, webhookUrl } = runtime;
  log(`receiver ready in ${runtime.readyMs} ms`);
  const rows: Webhook = await crm.core.register(CONTEXT, {
    name: 'crm-webhook-receiver',
    events: [...TABLES, REFUSED.table].flatMap((table) =>
      tableOf(table).verbs.map((verb) => `${tableOf(table).entity}.${verb}`),
    ),
    targetUrl: webhookUrl,
    secret: SECRET,
  });
  await crm.core.register(CONTEXT, {
    name: 'crm-webhook-receiver-state',
    events: ['started', 'stopped', 'errors'].map((verb) => `webhook${rows.id}.${verb}`),
    targetUrl: webhookUrl,
    headers: { 'X-Receiver-Token': TOKEN },
  });

  // Live: rows 1-6 of each table created, two changed, all applied by the receiver.
  for (const table of TABLES)
    for (const id of IDS.slice(0, 6))
      change({
        op: 'create',
        table,
        id,
        fields: { [FIELDS[table][0]]: 100 + id, [FIELDS[table][1]]: `live ${id}` },
      });
  change({ op: 'create', table: REFUSED.table, id: 1, fields: { [REFUSED.field]: 1 } });
  change({ op: 'change', table: 'contact', id: 1, fields: { department: 'live' } });
  change({ op: 'change', table: 'appointment', id: 1, fields: { task_idx: 7 } });
  await crm.core.dispatcher.idle();
  await vi.waitFor(
    async () => {
      expect(await settled(adminUrl), 'the runtime settled').toBe(true);
      expect(await readRow(adminUrl, CONTEXT, 'sale', 6), 'the live event of sale 6 applied').toBeDefined();
      expect(
        await readRow(adminUrl, CONTEXT, REFUSED.table, 1),
        `the live event of ${REFUSED.table} 1 applied`,
      ).toBeDefined();
    },
    { timeout: 30_000, interval: 250 },
  );
  log('live events applied');
  // The receiver polls its webhooks while healthy: the start of the window a gap is reconciled from.
  const beforePoll = crm.calls.of(CONTEXT);
  await vi.waitFor(
    () =>
      expect(
        callsSince(beforePoll).total,
        `calls of a poll of the receiver's webhooks in the CRM (RECONCILE_POLL_SECONDS=${POLL_SECONDS}); receiver: ${runtime?.output().slice(-3000)}`,
      ).toBeGreaterThan(0),
    { timeout: 3 * POLL_SECONDS * 1000, interval: 250 },
  );
  const before = await receiverRows(adminUrl);

  // Down for 20 s: a stream of changes over rows 1 and 2 of each table (each changed many times).
  await runtime.kill();
  const killedAt = Date.now();
  log('receiver killed');
  let step = 0;
  const stream = (async () => {
    while (Date.now() < killedAt + OUTAGE_MS - 500) {
      const table = TABLES[step % TABLES.length]!;
      const field = FIELDS[table][Math.floor(step / 8) % 2]!;
      const id = 1 + (Math.floor(step / 4) % 2);
      change({
        op: 'change',
        table,
        id,
        fields: { [field]: NUMBERS.has(field) ? step : `${field}-${step}` },
      });
      step++;
      await sleep(200);
    }
  })();
  await vi.waitFor(
    () =>
      expect(crm.core.webhook(CONTEXT, rows.id).state, 'the webhook disabled by the CRM').toBe(
        'TooManyErrors',
      ),
    { timeout: 15_000, interval: 250 },
  );
  // While it is disabled: a row changed twice, deletes, a soft delete, creates (one deleted again), a
  // change that raises no event.
  change({ op: 'change', table: 'contact', id: 3, fields: { category_idx: 31 } });
  change({ op: 'change', table: 'contact', id: 3, fields: { category_idx: 32, name: 'twice' } });
  for (const table of DELETABLE) change({ op: 'delete', table, id: 6 });
  change({ op: 'softdelete', table: 'person', id: 5 });
  change({ op: 'create', table: 'contact', id: 7, fields: { category_idx: 7 } });
  change({ op: 'create', table: 'sale', id: 7, fields: { amount: 7 } });
  change({ op: 'create', table: 'person', id: 8, fields: { associate_id: 8 } });
  change({ op: 'delete', table: 'person', id: 8 });
  change({ op: 'change', table: REFUSED.table, id: 1, fields: { [REFUSED.field]: 2 } });
  const silent = change({ op: 'change', table: 'contact', id: 4, fields: { phone: '+47 555 01 234' } });
  expect(silent.event).toBeUndefined();
  await stream;
  await sleep(killedAt + OUTAGE_MS - Date.now());
  const hook = crm.core.webhook(CONTEXT, rows.id);
  log(
    `down ${((Date.now() - killedAt) / 1000).toFixed(1)} s: ${step} streamed changes; webhook ${hook.state}, ` +
      `${hook.discarded} events discarded, ${hook.notSent} not sent`,
  );
  expect(hook).toMatchObject({ state: 'TooManyErrors' });
  expect(hook.discarded).toBeGreaterThan(0);
  expect(hook.notSent).toBeGreaterThan(0);

  // The receiver returns; nobody touches the CRM.
  const spawned = Date.now();
  runtime = await start();
  const returned = Date.now();
  const callsAtReturn = crm.calls.of(CONTEXT);
  log(`receiver back, ready in ${returned - spawned} ms`);
  const activeAfter = await vi.waitFor(
    () => {
      const webhook = crm.core.webhook(CONTEXT, rows.id);
      expect(
        webhook.state,
        `the webhook Active again: ${JSON.stringify(webhook)}; receiver: ${runtime?.output().slice(-3000)}`,
      ).toBe('Active');
      return Date.now() - returned;
    },
    { timeout: 120_000, interval: 250 },
  );
  const convergedAfter = await vi.waitFor(
    async () => {
      expect(
        await differences(adminUrl),
        `every row as the CRM has it; receiver: ${runtime?.output().slice(-3000)}`,
      ).toEqual([]);
      return Date.now() - returned;
    },
    { timeout: 120_000, interval: 500 },
  );
  // Everything the return set off (the gap's reconciles, their events to the subscriber) has ended.
  await vi.waitFor(
    async () => {
      expect(await settled(adminUrl), 'the runtime settled').toBe(true);
      const count = recorder.received.length;
      await sleep(3000);
      expect(recorder.received.length, 'events posted to the subscriber in 3 s').toBe(count);
      expect(await settled(adminUrl), 'the runtime still settled 3 s later').toBe(true);
    },
    { timeout: 60_000, interval: 250 },
  );
  const calls = callsSince(callsAtReturn);

  // Assert: every row the CRM's, the webhook Active, nothing parked or dead-lettered.
  expect(await differences(adminUrl)).toEqual([]);
  expect(crm.core.webhook(CONTEXT, rows.id).state).toBe('Active');
  for (const queue of await queues(adminUrl))
    expect({ queue: queue.key, visible: queue.visible, dlq: queue.dlq }).toEqual({
      queue: queue.key,
      visible: 0,
      dlq: 0,
    });
  // One `<entity>.reconciled` per row that differed before the return, none for the others.
  const after = await receiverRows(adminUrl);
  const differed = [...after.keys()].filter((row) => !sameRow(before.get(row), after.get(row)));
  const reconciled = new Map<string, number>();
  for (const { path, event } of recorder.received) {
    if (path !== '/reconciled') continue;
    const row = `${event.detail.Entity}/${event.detail.PrimaryKey}`;
    reconciled.set(row, (reconciled.get(row) ?? 0) + 1);
  }
  expect(Object.fromEntries(reconciled)).toEqual(Object.fromEntries(differed.map((row) => [row, 1])));
  const changedInGap = [
    ...TABLES.flatMap((table) => [1, 2].map((id) => key(table, id))),
    ...DELETABLE.map((table) => key(table, 6)),
  ];
  expect(differed).toEqual(
    expect.arrayContaining([...changedInGap, 'contact/3', 'person/5', 'contact/7', 'sale/7']),
  );
  expect(differed).not.toContain('contact/4');
  expect(after.get('person/8')).toBeUndefined();

  // The receiver said what it did on its bus: the webhook it set Active, a reconcile from before the outage.
  const lifecycle = recorder.received.filter((post) => post.path === '/lifecycle');
  const said = (type: string) =>
    lifecycle.filter((post) => post.event['detail-type'] === type).map((post) => post.event.detail);
  expect(said('receiver.webhook.reactivated')).toEqual([
    expect.objectContaining({ context: CONTEXT, webhookId: rows.id }),
  ]);
  const completed = said('receiver.reconcile.completed');
  expect(completed.length).toBeGreaterThan(0);
  // The refused table: left out of every run, with the CRM's status and answer; its row stays as the
  // webhook last delivered it (a person can see why on the gap card), the others converged.
  for (const detail of completed)
    expect(String((detail.notReconciled as Record<string, string>)[REFUSED.table])).toMatch(
      /answered HTTP 403: the table project is refused \(simulated\)$/,
    );
  const refusedRow = await readRow(adminUrl, CONTEXT, REFUSED.table, 1);
  expect(refusedRow?.fieldValues?.[REFUSED.field]).toBe(1);
  expect(crm.core.store.context(CONTEXT).rows[REFUSED.table]?.[1]?.[REFUSED.field]).toBe(2);
  expect(Date.parse(String(completed[0]!.from))).toBeLessThan(killedAt);

  // The figures.
  log(
    `webhook Active ${(activeAfter / 1000).toFixed(1)} s and every row converged ${(convergedAfter / 1000).toFixed(1)} s ` +
      `after the receiver's return (goal ≤ 60 s; ready ${returned - spawned} ms after npm start)`,
  );
  // The webhooks' calls (the poll's listings and usage counters, a run's one listing of the webhooks to
  // find the lists and custom tables) go on whether anything is reconciled.
  const webhookCalls = (calls.byKind.webhook ?? 0) + (calls.byKind['archive:webhook_usage'] ?? 0);
  const perRow = (count: number) => (count / differed.length).toFixed(2);
  log(
    `${differed.length} rows reconciled of ${after.size}; ${calls.total} API calls from the return until settled ` +
      `${JSON.stringify(calls.byKind)}: ${perRow(calls.total - webhookCalls)} per reconciled row without the webhooks' ` +
      `${webhookCalls} (goal ≤ 1.2), ${perRow(calls.total)} with them`,
  );
  for (const { event } of lifecycle) log(`${event['detail-type']} ${JSON.stringify(event.detail)}`);

  // The CRM API's Date was 10 minutes ahead through the recovery: the run said so (one warning line,
  // and the gap's card where the receiver holds the gap).
  const skewsSaid = () =>
    [...(runtime?.output() ?? '').matchAll(/"clockSkewSeconds":(-?\d+)/g)].map((match) => Number(match[1]));
  expect(skewsSaid().length).toBeGreaterThan(0);
  for (const seconds of skewsSaid()) expect(Math.abs(seconds - 600)).toBeLessThanOrEqual(5);
  log(`the CRM's API clock said ${skewsSaid().join(', ')} s ahead of its events' Timestamps`);

  // Live changes after the recovery, the Date now 10 minutes behind: each applied as it arrives (newer
  // than every snapshot of the recovery), then a reconcile brings the values of the changed rows.
  proxy.options.skewMs = -MINUTES_10;
  const liveFrom = new Date(Math.floor(Date.now() / 1000) * 1000 - 1000).toISOString();
  change({ op: 'change', table: 'contact', id: 3, fields: { category_idx: 33 } });
  change({ op: 'change', table: 'person', id: 1, fields: { associate_id: 11 } });
  change({ op: 'softdelete', table: 'contact', id: 5 });
  change({ op: 'create', table: 'contact', id: 8, fields: { category_idx: 8 } });
  await crm.core.dispatcher.idle();
  await vi.waitFor(
    async () => {
      const [contact3, person1, contact5, contact8] = await Promise.all([
        readRow(adminUrl, CONTEXT, 'contact', 3),
        readRow(adminUrl, CONTEXT, 'person', 1),
        readRow(adminUrl, CONTEXT, 'contact', 5),
        readRow(adminUrl, CONTEXT, 'contact', 8),
      ]);
      expect(
        {
          contact3Stale: contact3?.changedFields.includes('category_idx'),
          person1Stale: person1?.changedFields.includes('associate_id'),
          contact5: contact5?.status,
          contact8Differences: rowDifferences(contact8, crmRow('contact', 8)),
        },
        'the live changes after the recovery applied',
      ).toEqual({
        contact3Stale: true,
        person1Stale: true,
        contact5: 'softdeleted',
        contact8Differences: [],
      });
    },
    { timeout: 30_000, interval: 250 },
  );
  const queuedAt = Date.now();
  const queued = await fetch(
    `${adminUrl}/reconcile?context=${CONTEXT}&from=${encodeURIComponent(liveFrom)}&webhookId=${rows.id}`,
    { method: 'POST' },
  );
  expect(queued.status).toBe(200);
  const reconciledAfter = await vi.waitFor(
    async () => {
      expect(
        await differences(adminUrl),
        'every row as the CRM has it after the live changes and a reconcile with the Date 10 minutes behind',
      ).toEqual([]);
      // The live changes are applied already: the rows may equal the CRM's before the run ends, so wait
      // for the run too (its warning says the skew behind).
      expect(
        skewsSaid().some((seconds) => Math.abs(seconds + 600) <= 5),
        `the reconcile's warning of the Date 600 s behind; skews said: ${skewsSaid().join(', ')}`,
      ).toBe(true);
      return Date.now();
    },
    { timeout: 60_000, interval: 500 },
  );
  log(
    `live changes after the recovery applied; every row the CRM's again ${((reconciledAfter - queuedAt) / 1000).toFixed(1)} s ` +
      `after the reconcile was queued; the CRM's API clock said ${skewsSaid().join(', ')} s`,
  );
}, 360_000);
