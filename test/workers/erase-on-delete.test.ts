import { describe, expect, it } from 'vitest';
import { bookkeepingFilter, DEFAULT_BOOKKEEPING_FIELDS } from '../../lib/bus/entry.js';
import { erasesOnDelete } from '../../lib/config/erasure.js';
import type { RowEvent } from '../../lib/events/index.js';
import type { OutboundMessage } from '../../lib/queue/port.js';
import { snapshotMessage } from '../../lib/reconcile/run/snapshot-message.js';
import type { Store } from '../../lib/store/types.js';
import { createEntitiesWorker } from '../../lib/workers/index.js';
import { FakePublisher } from '../support/bus.js';
import { dynamoStoreForFile } from '../support/dynamo.js';
import {
  at,
  lambdaContext,
  redelivered,
  rowEvent,
  rowWorkerDeps,
  sqsEvent,
  sqsRecord,
  sqsRecordOf,
} from '../support/workers.js';

const db = dynamoStoreForFile();

/** Strings no sample carries: found anywhere after the erasure, they are the person's data leaking. */
const SECRETS = ['Zyxqwv-Firstname', 'Plokmij-Lastname', '1971-02-03-birth', 'Uhbygv-consent'];

function person(name: string, context: string, seconds: number, extra: Partial<RowEvent> = {}): RowEvent {
  return { ...rowEvent(name, { context, primaryKey: 77, timestamp: at(seconds) }), ...extra } as RowEvent;
}

function created(context: string, seconds: number): RowEvent {
  const event = person('person.created', context, seconds);
  return {
    ...event,
    FieldValues: { ...event.FieldValues, firstname: SECRETS[0], lastname: SECRETS[1], birthDate: SECRETS[2] },
  } as RowEvent;
}

function setup(options: { store?: Store; erase?: string } = {}) {
  const bus = new FakePublisher();
  const worker = createEntitiesWorker({
    ...rowWorkerDeps(options.store ?? db.store),
    erasesOnDelete: erasesOnDelete({ ERASE_ON_DELETE: options.erase }),
    publication: {
      publisher: bus,
      publishEchoes: false,
      isBookkeeping: bookkeepingFilter(DEFAULT_BOOKKEEPING_FIELDS),
    },
  });
  const run = async (...records: ReturnType<typeof sqsRecord>[]) =>
    (await worker(sqsEvent(records), lambdaContext)).batchItemFailures;
  return { bus, run };
}

/** Everything the store holds of the row, as text: the row and every history record (bodies included). */
async function stored(context: string): Promise<string> {
  const row = await db.store.getRow(context, 'person', 77);
  const history = await db.store.listRowEvents(context, 'person', 77);
  return JSON.stringify({ row, history });
}

function leaks(text: string): string[] {
  return SECRETS.filter((secret) => text.includes(secret));
}

function snapshotAt(context: string, seconds: number): OutboundMessage {
  return snapshotMessage({
    context,
    entity: 'person',
    primaryKey: 77,
    fetchedAt: new Date(at(seconds)),
    fieldValues: JSON.stringify({ person_id: 77, firstname: SECRETS[0], lastname: SECRETS[1] }),
  });
}

const lifeOf = (context: string) => [
  created(context, 1),
  person('person.changed', context, 2, { Changes: ['firstname', 'birthDate'] }),
  person('person.unconsented', context, 3, { Changes: ['legalBase', SECRETS[3]!] }),
  person('person.deleted', context, 4),
];

describe('ERASE_ON_DELETE: a hard delete erases the row and its history (dynalite)', () => {
  it('person.deleted leaves keys, order keys, status and deletedAt; no FieldValues, Values or Changes in the row or any history record', async () => {
    const { bus, run } = setup();
    const events = lifeOf('CustErase1');
    for (const event of events.slice(0, 3)) expect(await run(sqsRecord(event))).toEqual([]);
    expect(leaks(await stored('CustErase1'))).toEqual(SECRETS);

    expect(await run(sqsRecord(events[3]!))).toEqual([]);

    expect(leaks(await stored('CustErase1'))).toEqual([]);
    const row = await db.store.getRow('CustErase1', 'person', 77);
    expect(row).toMatchObject({
      status: 'deleted',
      deletedAt: events[3]!.Timestamp,
      eventCount: 4,
      changedFields: [],
    });
    expect(row).not.toHaveProperty('fieldValues');
    expect(row).not.toHaveProperty('values');
    expect(row!.fieldValuesSeq).toContain(events[0]!.EventId);
    expect(row!.recentSeqs).toHaveLength(4);
    const history = await db.store.listRowEvents('CustErase1', 'person', 77);
    expect(history.map((r) => [r.eventId, r.eventName, r.erased])).toEqual(
      events.map((e) => [e.EventId, e.Event, true]),
    );
    expect(history.every((r) => r.payload.FieldValues === undefined && r.payload.Values === undefined)).toBe(
      true,
    );
    // The deletion itself is published (identifiers only): subscribers erase their copies from it.
    expect(bus.details().map((d) => d.Event)).toContain('person.deleted');
  });

  it('a later live event, a redelivery or a snapshot of the row never brings the data back, nor publishes it', async () => {
    const { bus, run } = setup();
    const events = lifeOf('CustErase2');
    for (const event of events) expect(await run(sqsRecord(event))).toEqual([]);
    const published = bus.published.length;

    const lateCreated = created('CustErase2', 0.5); // older than everything: late
    const newerChange = person('person.changed', 'CustErase2', 9, { Changes: [SECRETS[3]!] });
    expect(await run(sqsRecord(lateCreated), sqsRecord(newerChange))).toEqual([]);
    expect(await run(redelivered(sqsRecord(events[0]!)))).toEqual([]);
    expect(
      await run(sqsRecordOf(snapshotAt('CustErase2', 3.5)), sqsRecordOf(snapshotAt('CustErase2', 20))),
    ).toEqual([]);

    expect(leaks(await stored('CustErase2'))).toEqual([]);
    expect(leaks(JSON.stringify(bus.details().slice(published)))).toEqual([]);
    expect(bus.published.length).toBe(published);
    expect(await db.store.getRow('CustErase2', 'person', 77)).toMatchObject({
      status: 'deleted',
      changedFields: [],
    });
  });

  it('a crash between the row write and the history erasure is finished by the redelivery', async () => {
    let crash = true;
    const crashing: Store = {
      ...db.store,
      async eraseRowHistory(...key) {
        if (crash) throw new Error('crashed after the row write');
        return db.store.eraseRowHistory(...key);
      },
    };
    const events = lifeOf('CustErase3');
    const { run } = setup({ store: crashing });
    for (const event of events.slice(0, 3)) expect(await run(sqsRecord(event))).toEqual([]);
    const deleted = sqsRecord(events[3]!);
    expect(await run(deleted)).toHaveLength(1);
    const row = await db.store.getRow('CustErase3', 'person', 77);
    expect(row).toMatchObject({ status: 'deleted' });
    expect(leaks(JSON.stringify(row))).toEqual([]);
    expect(leaks(await stored('CustErase3'))).not.toEqual([]); // the history still has them

    crash = false;
    expect(await run(redelivered(deleted))).toEqual([]);

    expect(leaks(await stored('CustErase3'))).toEqual([]);
    expect(await db.store.getRow('CustErase3', 'person', 77)).toMatchObject({ eventCount: 4 });
  });

  it('an erased record still tells a redelivery from a conflict and a resend (its content hash is kept)', async () => {
    const { run } = setup();
    const events = lifeOf('CustErase4');
    for (const event of events) expect(await run(sqsRecord(event))).toEqual([]);
    // Nine more events push the created one out of the row's window: only the history can recognise it.
    for (let i = 0; i < 9; i++)
      expect(
        await run(sqsRecord(person('person.changed', 'CustErase4', 10 + i, { Changes: ['updated'] }))),
      ).toEqual([]);
    const before = await db.store.getRow('CustErase4', 'person', 77);

    expect(await run(redelivered(sqsRecord(events[0]!)))).toEqual([]);
    expect(await run(sqsRecord({ ...events[0]!, EventId: crypto.randomUUID() }))).toEqual([]);

    const history = await db.store.listRowEvents('CustErase4', 'person', 77);
    expect(history.filter((r) => r.resendOf !== undefined)).toHaveLength(1);
    expect(history.filter((r) => r.conflictOf !== undefined)).toHaveLength(0);
    expect((await db.store.getRow('CustErase4', 'person', 77))!.eventCount).toBe(before!.eventCount);
    expect(leaks(await stored('CustErase4'))).toEqual([]);
  });

  it('ERASE_ON_DELETE=none keeps a deleted row as it was; the default erases person only', async () => {
    const { run } = setup({ erase: 'none' });
    for (const event of lifeOf('CustErase5')) expect(await run(sqsRecord(event))).toEqual([]);
    expect(leaks(await stored('CustErase5'))).toEqual(SECRETS);

    const byDefault = erasesOnDelete({});
    expect([byDefault('person'), byDefault('contact')]).toEqual([true, false]);
    expect(erasesOnDelete({ ERASE_ON_DELETE: '*' })('y_equipment')).toBe(true);
    expect(erasesOnDelete({ ERASE_ON_DELETE: 'person, contact' })('contact')).toBe(true);
    expect(() => erasesOnDelete({ ERASE_ON_DELETE: 'person;drop' })).toThrow(/ERASE_ON_DELETE must be/);
  });
});
