import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDashboard, TOKEN_HEADER } from '../../dashboard/server.js';
import { bookkeepingFilter, DEFAULT_BOOKKEEPING_FIELDS } from '../../lib/bus/entry.js';
import { erasesOnDelete } from '../../lib/config/erasure.js';
import { eraseTenant, sqsErasureQueue } from '../../lib/erasure/index.js';
import type { RowEvent } from '../../lib/events/index.js';
import { createSqsSender } from '../../lib/queue/sqs.js';
import { createDynamoReplayLock } from '../../lib/store/index.js';
import type { Store } from '../../lib/store/types.js';
import { createEntitiesWorker } from '../../lib/workers/index.js';
import { createAdminServer } from '../../local/admin/admin-api.js';
import { buildSampleBody } from '../../tools/samples.js';
import { FakePublisher } from '../support/bus.js';
import { type LocalDynamo, startDynamoStore, type TableNames } from '../support/dynamo.js';
import { testSource } from '../support/local-source.js';
import { type ParkedQueues, startParkedQueues } from '../support/parked.js';
import { at, lambdaContext, rowEvent, rowWorkerDeps, sqsEvent, sqsRecord } from '../support/workers.js';

/** Strings only person 77 carries: after the erasure no API of the receiver may answer one. */
const SECRETS = ['Gfdsaq-Firstname', 'Mnbvcx-Lastname', '1969-07-20-birth'];
/** Person 78's: the erasure of 77 must leave them where they are. */
const OTHER = 'Keep-Me-Person-78';

let dynamo: LocalDynamo;
let store: Store;
let parked: ParkedQueues;
let tables: TableNames;
let server: Server;
let base: string;
const dashboard = createDashboard('the-page-token');

beforeAll(async () => {
  ({ dynamo, tables, store } = await startDynamoStore());
  parked = await startParkedQueues();
  const { client: sqs, queues, emulator } = parked.local;
  const source = testSource({
    store,
    sqs,
    queues,
    peek: emulator.peek,
    doc: dynamo.doc,
    eventsTable: tables.events,
    webhooksTable: tables.webhooks,
    erasure: { store, sqs, queues, env: {}, doc: dynamo.doc, webhooksTable: tables.webhooks },
  });
  server = createAdminServer({ source, queues, peek: emulator.peek, isReady: () => true, dashboard });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.close();
  await parked.local.close();
  await dynamo.close();
});

function person(name: string, context: string, primaryKey: number, seconds: number, fields = {}): RowEvent {
  const event = rowEvent(name, { context, primaryKey, timestamp: at(seconds) });
  return (
    event.FieldValues === undefined ? event : { ...event, FieldValues: { ...event.FieldValues, ...fields } }
  ) as RowEvent;
}

const personal = { firstname: SECRETS[0], lastname: SECRETS[1], birthDate: SECRETS[2] };

function worker(bus = new FakePublisher()) {
  const handler = createEntitiesWorker({
    ...rowWorkerDeps(store),
    erasesOnDelete: erasesOnDelete({ ERASE_ON_DELETE: 'none' }),
    publication: {
      publisher: bus,
      publishEchoes: false,
      isBookkeeping: bookkeepingFilter(DEFAULT_BOOKKEEPING_FIELDS),
    },
  });
  return async (event: RowEvent) =>
    expect((await handler(sqsEvent([sqsRecord(event)]), lambdaContext)).batchItemFailures).toEqual([]);
}

/** What every read API of the receiver answers about the context, as one text. */
async function everythingShown(context: string): Promise<string> {
  const answers = await Promise.all(
    [
      `/rows/${context}/person/77`,
      `/rows/${context}/person/77/events`,
      '/parked?limit=100',
      '/queues/entities/dlq',
      '/queues/parked/dlq',
    ].map(async (path) => (await fetch(`${base}${path}`)).text()),
  );
  const history = await store.listRowEvents(context, 'person', 77);
  const found = await Promise.all(
    history.map(async (record) => (await fetch(`${base}/events/${record.eventId}`)).text()),
  );
  return [...answers, ...found].join('\n');
}

const erase = (query: string, headers: Record<string, string> = {}) =>
  fetch(`${base}/erase?${query}`, { method: 'POST', headers });

describe('erasure on request: POST /erase (local admin API over dynalite and the SQS emulator)', () => {
  it('erases the row, its history and the parked and dead-lettered messages that carry it, and nothing else', async () => {
    const run = worker();
    await run(person('person.created', 'CustAsk', 77, 1, personal));
    await run(person('person.changed', 'CustAsk', 77, 2));
    await run(person('person.created', 'CustAsk', 78, 1, { firstname: OTHER }));
    // Parked once (ENTITIES=contact parks persons), dead-lettered once; person 78 beside it in both.
    await parked.park([
      buildSampleBody('person.changed', { context: 'CustAsk', primaryKey: 77 }),
      { ...buildSampleBody('person.created', { context: 'CustAsk', primaryKey: 77 }), FieldValues: personal },
      {
        ...buildSampleBody('person.created', { context: 'CustAsk', primaryKey: 78 }),
        FieldValues: { firstname: OTHER },
      },
    ]);
    const dlq = parked.local.queues.find((queue) => queue.key === 'entities')!.dlq;
    const toDlq = createSqsSender({
      client: parked.local.client,
      queueUrls: { ...parked.queueUrls, entities: dlq.url },
    });
    for (const [key, fields] of [
      [77, personal],
      [78, { firstname: OTHER }],
    ] as const) {
      const body = JSON.stringify({
        ...buildSampleBody('person.created', { context: 'CustAsk', primaryKey: key }),
        FieldValues: fields,
      });
      await toDlq.send({
        queue: 'entities',
        body,
        groupId: `CustAsk:person:${key}`,
        deduplicationId: `d${key}`,
        attributes: {},
      });
    }
    const before = await everythingShown('CustAsk');
    expect(SECRETS.filter((secret) => before.includes(secret))).toEqual(SECRETS);

    const answer = await erase('context=CustAsk&entity=person&id=77');

    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({
      rows: 1,
      historyRecords: 2,
      messages: { [parked.local.queues.find((q) => q.key === 'parked')!.name]: 2, [dlq.name]: 1 },
      published: 0,
      complete: true,
    });
    const after = await everythingShown('CustAsk');
    expect(SECRETS.filter((secret) => after.includes(secret))).toEqual([]);
    expect(after).toContain(OTHER); // person 78's parked and dead-lettered messages stay
    expect(parked.peek('parked')).toHaveLength(1);
    expect(parked.local.emulator.peek(dlq.name)).toHaveLength(1);
    expect(JSON.stringify(await store.getRow('CustAsk', 'person', 78))).toContain(OTHER);

    // A second request finds nothing left, and says so.
    expect(await (await erase('context=CustAsk&entity=person&id=77')).json()).toMatchObject({
      historyRecords: 0,
    });
  });

  it('a later event of an erased row brings nothing back and publishes nothing', async () => {
    const bus = new FakePublisher();
    const run = worker(bus);
    await run(person('person.created', 'CustAsk2', 77, 1, personal));
    expect((await erase('context=CustAsk2&entity=person&id=77')).status).toBe(200);

    await run(person('person.created', 'CustAsk2', 77, 5, personal));
    await run(person('person.changed', 'CustAsk2', 77, 6));

    const shown = await everythingShown('CustAsk2');
    expect(SECRETS.filter((secret) => shown.includes(secret))).toEqual([]);
    expect(await store.getRow('CustAsk2', 'person', 77)).toMatchObject({ status: 'active', eventCount: 3 });
    expect(bus.details().map((detail) => detail.Event)).toEqual(['person.created']);
  });

  it('context alone erases every row of the tenant; receiver.row.erased carries keys and counts only', async () => {
    const run = worker();
    for (const key of [1, 2, 3]) await run(person('person.created', 'CustGone', key, 1, personal));
    await run(person('person.created', 'CustStays', 1, 1, { firstname: OTHER }));
    const bus = new FakePublisher();
    const { client, queues } = parked.local;

    const report = await eraseTenant(
      { store, queues: queues.map((queue) => sqsErasureQueue(client, queue.dlq)), publisher: bus },
      'CustGone',
    );

    expect(report).toMatchObject({ rows: 3, historyRecords: 3, published: 1 });
    for (const key of [1, 2, 3])
      expect(JSON.stringify(await store.listRowEvents('CustGone', 'person', key))).not.toContain(SECRETS[0]);
    expect(JSON.stringify(await store.getRow('CustStays', 'person', 1))).toContain(OTHER);
    expect(bus.published.map((entry) => entry.DetailType)).toEqual(['receiver.row.erased']);
    expect(JSON.parse(bus.published[0]!.Detail)).toEqual({
      context: 'CustGone',
      erasedAt: expect.any(String),
      rows: 3,
      reason: 'request',
    });
  });

  it('answers 409 while a replay holds the parked queue, after erasing the row and its history', async () => {
    const run = worker();
    await run(person('person.created', 'CustBusy', 77, 1, personal));
    const replay = createDynamoReplayLock({ client: dynamo.doc, table: tables.webhooks });
    await replay.acquire();
    try {
      const answer = await erase('context=CustBusy&entity=person&id=77');
      expect(answer.status).toBe(409);
      expect(await answer.text()).toMatch(/another replay of the parked queue is running/);
      expect(JSON.stringify(await store.getRow('CustBusy', 'person', 77))).not.toContain(SECRETS[0]);
    } finally {
      await replay.release();
    }
    expect((await erase('context=CustBusy&entity=person&id=77')).status).toBe(200);
  });

  it('refuses a wrong request before erasing anything, and a browser POST without the page token', async () => {
    for (const query of [
      'entity=person&id=77',
      'context=CustAsk&entity=person',
      'context=CustAsk&entity=invoice&id=1',
      'context=CustAsk&entity=person&id=x',
    ])
      expect((await erase(query)).status).toBe(400);
    const fromPage = await erase('context=CustAsk&entity=person&id=78', {
      Origin: base,
      'Sec-Fetch-Site': 'same-origin',
    });
    expect(fromPage.status).toBe(403);
    expect(JSON.stringify(await store.getRow('CustAsk', 'person', 78))).toContain(OTHER);
    const withToken = await erase('context=CustAsk&entity=person&id=78', {
      Origin: base,
      [TOKEN_HEADER]: 'the-page-token',
    });
    expect(withToken.status).toBe(200);
  });
});
