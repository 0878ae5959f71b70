import { describe, expect, it } from 'vitest';
import type { Store } from '../../lib/store/types.js';
import { createStateWorker } from '../../lib/workers/index.js';
import { buildSampleBody } from '../../tools/samples.js';
import { dynamoStoreForFile } from '../support/dynamo.js';
import {
  at,
  lambdaContext,
  publishingContactWorker,
  quietObservability,
  redelivered,
  rowEvent,
  sqsEvent,
  sqsRecord,
  stateEvent,
} from '../support/workers.js';

const db = dynamoStoreForFile();

const ECHO_ASSOCIATE = 99;

function setup(options: { publishEchoes?: boolean } = {}) {
  const { bus, worker, publication } = publishingContactWorker(db.store, {
    ...options,
    ignoreAssociateIds: [ECHO_ASSOCIATE],
  });
  const stateWorker = createStateWorker({ store: db.store, hooks: {}, publication, ...quietObservability() });
  return { bus, worker, stateWorker };
}

describe('publishing applied changes to the bus', () => {
  it('publishes each change once, in PutEvents calls of up to 10, after the row is written', async () => {
    const { bus, worker } = setup();
    const events = Array.from({ length: 12 }, (_, i) =>
      rowEvent(i === 0 ? 'contact.created' : 'contact.changed', {
        context: 'CustPub',
        primaryKey: 1,
        timestamp: at(i),
      }),
    );

    const response = await worker(sqsEvent(events.map((e) => sqsRecord(e))), lambdaContext);

    expect(response.batchItemFailures).toEqual([]);
    expect(bus.calls).toEqual([12]); // one publish per batch; the EventBridge adapter splits it by 10
    expect(bus.details().map((d) => d.EventId)).toEqual(events.map((e) => e.EventId));
    const last = bus.details().at(-1)!;
    expect(last).toMatchObject({
      Event: 'contact.changed',
      outcome: 'applied',
      echo: false,
      row: { status: 'active', lastEventId: events[11]!.EventId },
    });
    expect(last.significantChanges).not.toContain('updated');
    const row = await db.store.getRow('CustPub', 'contact', 1);
    expect(row).toMatchObject({ eventCount: 12, lastEventId: events[11]!.EventId });
  });

  it('keeps the delivered digits of FieldValues in the entry and its row', async () => {
    const { bus, worker } = setup();
    const body = buildSampleBody('contact.created', { context: 'CustDigits', primaryKey: 2 });
    const raw = JSON.stringify(body).replace('"FieldValues":{', '"FieldValues":{"big":9007199254740993,');

    await worker(sqsEvent([sqsRecord(body, { raw })]), lambdaContext);

    expect(bus.published).toHaveLength(1);
    expect(bus.published[0]!.Detail.match(/"big":9007199254740993/g)).toHaveLength(2);
  });

  it('publishes nothing for a duplicate, a resend, an EventId conflict or an echo', async () => {
    const { bus, worker } = setup();
    const key = { context: 'CustQuiet', primaryKey: 3 };
    const created = rowEvent('contact.created', { ...key, timestamp: at(1) });
    await worker(sqsEvent([sqsRecord(created)]), lambdaContext);
    expect(bus.published).toHaveLength(1);

    const resend = { ...created, EventId: crypto.randomUUID() };
    const conflict = { ...created, Changes: ['name'] };
    const echo = rowEvent('contact.changed', {
      ...key,
      timestamp: at(2),
      changedByAssociateId: ECHO_ASSOCIATE,
    });
    const again = [created, resend, conflict, echo].map((event) => sqsRecord(event));
    const response = await worker(sqsEvent(again), lambdaContext);

    expect(response.batchItemFailures).toEqual([]);
    expect(bus.published).toHaveLength(1);
    expect(await db.store.listRowEvents('CustQuiet', 'contact', 3)).toHaveLength(4); // all recorded
  });

  it('publishes echoes when PUBLISH_ECHOES is true, marked as such', async () => {
    const { bus, worker } = setup({ publishEchoes: true });
    const echo = rowEvent('contact.created', { context: 'CustEcho', changedByAssociateId: ECHO_ASSOCIATE });
    await worker(sqsEvent([sqsRecord(echo)]), lambdaContext);
    expect(bus.details()).toMatchObject([{ EventId: echo.EventId, echo: true }]);
  });

  it('a failed entry fails only its record and the rest of its group; the redelivery publishes it', async () => {
    const { bus, worker } = setup();
    const a1 = sqsRecord(
      rowEvent('contact.created', { context: 'CustFail', primaryKey: 1, timestamp: at(1) }),
    );
    const b1 = sqsRecord(
      rowEvent('contact.created', { context: 'CustFail', primaryKey: 2, timestamp: at(1) }),
    );
    const a2 = sqsRecord(
      rowEvent('contact.changed', { context: 'CustFail', primaryKey: 1, timestamp: at(2) }),
    );
    bus.failNext(JSON.parse(a1.body).EventId);

    const response = await worker(sqsEvent([a1, b1, a2]), lambdaContext);

    expect(response.batchItemFailures).toEqual([
      { itemIdentifier: a1.messageId },
      { itemIdentifier: a2.messageId },
    ]);
    expect(bus.details().map((d) => d.EventId)).toEqual([b1, a2].map((r) => JSON.parse(r.body).EventId));
    expect(await db.store.getRow('CustFail', 'contact', 1)).toMatchObject({ eventCount: 2 }); // written all the same

    // SQS redelivers a1 and a2: both rows writes are no-ops now, and a1 is published this time
    const retry = await worker(sqsEvent([redelivered(a1), redelivered(a2)]), lambdaContext);

    expect(retry.batchItemFailures).toEqual([]);
    const [a1Id, a2Id] = [a1, a2].map((r) => JSON.parse(r.body).EventId);
    const published = bus.details();
    expect(published.filter((d) => d.EventId === a1Id)).toMatchObject([{ outcome: 'late' }]); // a2 is newer
    // a2 was published before its group failed, and its history says so: the redelivery does not repeat it
    expect(published.filter((d) => d.EventId === a2Id)).toHaveLength(1);
    expect(await db.store.getRow('CustFail', 'contact', 1)).toMatchObject({ eventCount: 2 });
  });

  it('a change whose publish kept failing is published when redriven from the DLQ (receive count 1), once', async () => {
    const { bus, worker } = setup();
    const event = rowEvent('contact.created', { context: 'CustRedrive', primaryKey: 1, timestamp: at(1) });
    const record = sqsRecord(event);
    let delivery = record;
    for (let attempt = 1; attempt <= 5; attempt++) {
      bus.failNext(event.EventId);
      const failed = await worker(sqsEvent([delivery]), lambdaContext);
      expect(failed.batchItemFailures).toEqual([{ itemIdentifier: record.messageId }]);
      delivery = redelivered(delivery);
    }
    expect(bus.details()).toEqual([]);

    // Redriven: the same message back on its queue, its receive count started again.
    const redriven = await worker(sqsEvent([record]), lambdaContext);
    const again = await worker(sqsEvent([record]), lambdaContext);

    expect([redriven.batchItemFailures, again.batchItemFailures]).toEqual([[], []]);
    expect(bus.details().map((d) => d.EventId)).toEqual([event.EventId]);
    expect(await db.store.getRow('CustRedrive', 'contact', 1)).toMatchObject({ eventCount: 1 });
  });

  it('writes nothing after the history put to publish once: no second write per published change', async () => {
    const writes: string[] = [];
    const counted = new Proxy(db.store, {
      get(target, name: keyof Store) {
        const value = target[name];
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          writes.push(name);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const { bus, worker } = publishingContactWorker(counted);
    const events = Array.from({ length: 5 }, (_, i) =>
      rowEvent(i === 0 ? 'contact.created' : 'contact.changed', {
        context: 'CustOneWrite',
        primaryKey: 1,
        timestamp: at(i + 1),
      }),
    );

    const response = await worker(sqsEvent(events.map((event) => sqsRecord(event))), lambdaContext);

    expect(response.batchItemFailures).toEqual([]);
    expect(bus.details().map((d) => d.EventId)).toEqual(events.map((event) => event.EventId));
    const count = (name: string) => writes.filter((w) => w === name).length;
    expect([count('recordEvent'), count('saveRow'), count('markAccepted')]).toEqual([5, 5, 1]);
    expect(writes.filter((w) => !['recordEvent', 'saveRow', 'markAccepted', 'loadRow'].includes(w))).toEqual(
      [],
    );
  });

  it('a redelivery to another worker instance publishes the change again (at least once, never lost)', async () => {
    const first = setup();
    const event = rowEvent('contact.created', {
      context: 'CustOtherInstance',
      primaryKey: 1,
      timestamp: at(1),
    });
    const record = sqsRecord(event);
    expect((await first.worker(sqsEvent([record]), lambdaContext)).batchItemFailures).toEqual([]);
    // the same instance remembers it published the change
    await first.worker(sqsEvent([redelivered(record)]), lambdaContext);
    expect(first.bus.details().map((d) => d.EventId)).toEqual([event.EventId]);

    const other = setup();
    await other.worker(sqsEvent([redelivered(record)]), lambdaContext);

    expect(other.bus.details()).toMatchObject([{ EventId: event.EventId, outcome: 'applied' }]);
    expect(await db.store.getRow('CustOtherInstance', 'contact', 1)).toMatchObject({ eventCount: 1 });
  });

  it('puts on the bus only the changes some subscription matches (PUBLISH_DETAIL_TYPES); the rows take every change', async () => {
    const { bus, worker } = publishingContactWorker(db.store, {
      patterns: [
        { 'detail-type': ['contact.changed'], detail: { significantChanges: ['department'] } },
        { 'detail-type': ['contact.deleted', 'sale.sold'] },
      ],
    });
    const at1 = { context: 'CustMatched', primaryKey: 1 };
    const created = rowEvent('contact.created', { ...at1, timestamp: at(1) });
    const changed = rowEvent('contact.changed', { ...at1, timestamp: at(2) });

    const first = await worker(sqsEvent([sqsRecord(created)]), lambdaContext);
    expect(first.batchItemFailures).toEqual([]);
    expect(bus.calls).toEqual([]); // no subscription matches a created: no PutEvents at all

    await worker(sqsEvent([sqsRecord(changed)]), lambdaContext);
    expect(bus.details()).toMatchObject([{ EventId: changed.EventId, Event: 'contact.changed' }]);
    expect(await db.store.getRow('CustMatched', 'contact', 1)).toMatchObject({ eventCount: 2 });
  });

  it('publishes webhook state events with the webhook and its open gap', async () => {
    const { bus, stateWorker } = setup();
    const stopped = stateEvent('webhook.stopped', { context: 'CustState', primaryKey: 4, timestamp: at(5) });

    const response = await stateWorker(sqsEvent([sqsRecord(stopped), sqsRecord(stopped)]), lambdaContext);

    expect(response.batchItemFailures).toEqual([]);
    // The gap it opened is announced too (once: the second message is a duplicate received once).
    expect(bus.details()[0]).toEqual({
      context: 'CustState',
      webhookId: 4,
      webhookName: 'crm-webhook-receiver',
      openedAt: stopped.Timestamp,
    });
    expect(bus.details().slice(1)).toMatchObject([
      {
        Event: 'webhook.stopped',
        outcome: 'applied',
        webhook: {
          state: 1,
          stateName: 'Stopped',
          gap: { openedAt: stopped.Timestamp, openedByEventId: stopped.EventId },
        },
      },
    ]);
    expect(bus.published.map((entry) => entry.DetailType)).toEqual([
      'receiver.gap.opened',
      'webhook.stopped',
    ]);
    expect(bus.details()[1]).not.toHaveProperty('row');
  });
});
