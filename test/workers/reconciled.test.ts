import { describe, expect, it } from 'vitest';
import { bookkeepingFilter, DEFAULT_BOOKKEEPING_FIELDS } from '../../lib/bus/entry.js';
import type { RowEvent } from '../../lib/events/index.js';
import { type FetchedRow, snapshotMessage } from '../../lib/reconcile/run/snapshot-message.js';
import type { Store } from '../../lib/store/types.js';
import { createRowWorker } from '../../lib/workers/index.js';
import { dynamoStoreForFile } from '../support/dynamo.js';
import {
  at,
  contactWorker,
  lambdaContext,
  publishingContactWorker,
  redelivered,
  rowEvent,
  rowWorkerDeps,
  sqsEvent,
  sqsRecord,
  sqsRecordOf,
} from '../support/workers.js';

const db = dynamoStoreForFile();

function setup() {
  const { bus, worker } = publishingContactWorker(db.store);
  /** Runs one batch and expects every record to succeed. */
  const run = async (...records: ReturnType<typeof sqsRecord>[]) => {
    const response = await worker(sqsEvent(records), lambdaContext);
    expect(response.batchItemFailures).toEqual([]);
  };
  return { bus, run };
}

/** A created event whose FieldValues carry `values` (beside the sample's). */
function created(context: string, seconds: number, values: Record<string, unknown>): RowEvent {
  const event = rowEvent('contact.created', { context, primaryKey: 7, timestamp: at(seconds) });
  return { ...event, FieldValues: { ...event.FieldValues, ...values } } as RowEvent;
}

function changed(context: string, seconds: number, field: string): RowEvent {
  return {
    ...rowEvent('contact.changed', { context, primaryKey: 7, timestamp: at(seconds) }),
    Changes: [field],
  };
}

/** A snapshot fetched at `seconds`: the created event's FieldValues with `values` over them, as text. */
function snapshot(context: string, seconds: number, base: RowEvent, values: Record<string, string>) {
  let text = JSON.stringify(base.FieldValues);
  for (const [field, value] of Object.entries(values)) text = text.replace(/}$/, `,"${field}":${value}}`);
  const row: FetchedRow = {
    context,
    entity: 'contact',
    primaryKey: 7,
    fetchedAt: new Date(at(seconds)),
    fieldValues: text,
  };
  return snapshotMessage(row);
}

describe('<entity>.reconciled through the contact worker (dynalite)', () => {
  it('a snapshot that differs replaces FieldValues exactly, is recorded with the fields it changed, counted, and published once', async () => {
    const { bus, run } = setup();
    const base = created('CustRec1', 0, { name: 'Old' });
    await run(sqsRecord(base));
    const message = snapshot('CustRec1', 10, base, { name: '"New"', big: '12345678901234567890' });
    const record = sqsRecordOf(message);

    await run(record);
    await run(redelivered(record)); // SQS again, after the 5-minute deduplication window

    const row = await db.store.getRow('CustRec1', 'contact', 7);
    expect(row).toMatchObject({ status: 'active', eventCount: 2, lastEvent: 'contact.reconciled' });
    expect(row?.fieldValuesJson).toContain('"big":12345678901234567890');
    expect(row?.fieldValuesTimestamp).toBe(at(10).replace(/0000Z$/, 'Z'));
    const history = await db.store.listRowEvents('CustRec1', 'contact', 7);
    expect(history.map((r) => [r.eventName, r.changed])).toEqual([
      ['contact.created', undefined],
      ['contact.reconciled', ['big', 'name']],
    ]);
    const published = bus.published.filter((entry) => entry.DetailType === 'contact.reconciled');
    expect(published).toHaveLength(1);
    expect(published[0]!.Detail).toContain('"big":12345678901234567890');
    expect(JSON.parse(published[0]!.Detail)).toMatchObject({
      significantChanges: ['big', 'name'],
      outcome: 'applied',
      row: { status: 'active' },
    });
    // A snapshot came through no webhook: the gap marker stays on the live event.
    expect(await db.store.getLastAccepted('CustRec1', base.WebhookName)).toMatchObject({
      eventId: base.EventId,
    });
    expect(await db.store.getLastAccepted('CustRec1', '')).toBeUndefined();
  });

  it('a snapshot equal to the row records nothing, counts nothing and publishes nothing; an older answer arriving later cannot undo it', async () => {
    const { bus, run } = setup();
    const base = created('CustRec2', 0, { name: 'Same' });
    await run(sqsRecord(base));
    const before = (await db.store.loadRow('CustRec2', 'contact', 7)).item!;
    const equal = sqsRecordOf(snapshot('CustRec2', 10, base, {}));

    await run(equal);
    const after = await db.store.loadRow('CustRec2', 'contact', 7);
    await run(redelivered(equal)); // confirms nothing more: no write
    // The CRM's name was Other at 5 and Same again by 10, whose change events were lost.
    await run(sqsRecordOf(snapshot('CustRec2', 5, base, { name: '"Other"' })));

    // Only the order keys of its FieldValues moved to F (one write): same data, same count, same last event.
    const { fieldValuesTimestamp, fieldValuesSeq, statusSeq, ...unchanged } = after.item!;
    expect(unchanged).toEqual(
      (({ fieldValuesTimestamp: _t, fieldValuesSeq: _s, statusSeq: _u, ...rest }) => rest)(before),
    );
    expect(fieldValuesTimestamp).toBe('2025-05-14T12:00:10.000Z');
    expect(await db.store.loadRow('CustRec2', 'contact', 7)).toEqual(after);
    expect((await db.store.listRowEvents('CustRec2', 'contact', 7)).map((r) => r.eventName)).toEqual([
      'contact.created',
    ]);
    expect(bus.published.map((entry) => entry.DetailType)).toEqual(['contact.created']);
  });

  it('is ordered at its fetch time: a live change newer than F stays stale, an older one arriving later is late', async () => {
    const { bus, run } = setup();
    const base = created('CustRec3', 0, { name: 'Old', department: '"Old"' });
    await run(sqsRecord(base), sqsRecord(changed('CustRec3', 20, 'name')));
    const older = changed('CustRec3', 5, 'department');

    await run(sqsRecordOf(snapshot('CustRec3', 10, base, { department: '"Sales"' })));
    await run(sqsRecord(older));

    const row = await db.store.getRow('CustRec3', 'contact', 7);
    expect(row?.fieldValues).toMatchObject({ department: 'Sales' });
    expect(row?.changedFields).toEqual(['name']); // the change at 20 is newer than the snapshot's values
    expect(row).toMatchObject({ lastEvent: 'contact.changed', lastTimestamp: at(20), eventCount: 4 });
    const details = bus.details().filter((d) => d.Event === 'contact.reconciled');
    expect(details).toMatchObject([{ outcome: 'late', significantChanges: ['department'] }]);
    expect(bus.details().at(-1)).toMatchObject({ EventId: older.EventId, outcome: 'late' });
  });

  it('a live event at the same Timestamp as the snapshot wins the tie', async () => {
    const { run } = setup();
    const base = created('CustRec4', 0, { name: 'Old' });
    const tie = changed('CustRec4', 10, 'name');
    await run(sqsRecord(base), sqsRecord(tie));

    await run(sqsRecordOf(snapshot('CustRec4', 10, base, { name: '"Fetched"' })));

    const row = await db.store.getRow('CustRec4', 'contact', 7);
    expect(row).toMatchObject({ lastEventId: tie.EventId, changedFields: ['name'] });
  });

  it('a 404 snapshot marks the row deleted and publishes contact.reconciled once', async () => {
    const { bus, run } = setup();
    const base = created('CustRec5', 0, { name: 'Gone' });
    await run(sqsRecord(base));
    const gone = snapshotMessage({
      context: 'CustRec5',
      entity: 'contact',
      primaryKey: 7,
      fetchedAt: new Date(at(30)),
      deleted: true,
    });

    await run(sqsRecordOf(gone));
    await run(redelivered(sqsRecordOf(gone)));

    const row = await db.store.getRow('CustRec5', 'contact', 7);
    expect(row).toMatchObject({ status: 'deleted', eventCount: 2 });
    expect(row?.fieldValues).toMatchObject({ name: 'Gone' });
    expect(bus.details().filter((d) => d.Event === 'contact.reconciled')).toMatchObject([
      { Deleted: true, significantChanges: [], row: { status: 'deleted' } },
    ]);
  });

  it('a snapshot recorded by an attempt whose row write failed is merged and counted on redrive, even when it no longer changes anything', async () => {
    const { run } = setup();
    const base = created('CustRec6', 0, { name: 'Old' });
    await run(sqsRecord(base));
    const first = sqsRecordOf(snapshot('CustRec6', 10, base, { name: '"New"' }));
    let crash = true;
    const crashing: Store = {
      ...db.store,
      async saveRow(row, version) {
        if (crash) throw new Error('throttled after the history put');
        await db.store.saveRow(row, version);
      },
    };
    const faulty = contactWorker(crashing);
    // Its receives fail (it goes to the DLQ); a later snapshot with the same answer gets through.
    expect((await faulty(sqsEvent([first]), lambdaContext)).batchItemFailures).toHaveLength(1);
    crash = false;
    await run(sqsRecordOf(snapshot('CustRec6', 20, base, { name: '"New"' })));

    await run(redelivered(first)); // redriven: older than the row's FieldValues now, equal to them

    const history = await db.store.listRowEvents('CustRec6', 'contact', 7);
    expect(history.map((r) => r.changed)).toEqual([undefined, ['name'], ['name']]);
    expect(await db.store.getRow('CustRec6', 'contact', 7)).toMatchObject({ eventCount: 3 });
  });

  it('a snapshot whose entry PutEvents refused is published on its redelivery, with the fields its record names', async () => {
    const { bus, run } = setup();
    const base = created('CustRec7', 0, { name: 'Old' });
    await run(sqsRecord(base));
    const message = snapshot('CustRec7', 10, base, { name: '"New"' });
    const record = sqsRecordOf(message);
    bus.failNext(message.deduplicationId);

    const worker = createRowWorker({
      entity: 'contact',
      ...rowWorkerDeps(db.store),
      publication: {
        publisher: bus,
        publishEchoes: false,
        isBookkeeping: bookkeepingFilter(DEFAULT_BOOKKEEPING_FIELDS),
      },
    });
    expect((await worker(sqsEvent([record]), lambdaContext)).batchItemFailures).toHaveLength(1);
    await run(redelivered(record));
    await run(redelivered(redelivered(record)));

    const published = bus.details().filter((d) => d.Event === 'contact.reconciled');
    expect(published).toMatchObject([{ significantChanges: ['name'], outcome: 'applied' }]);
    expect(await db.store.getRow('CustRec7', 'contact', 7)).toMatchObject({ eventCount: 2 });
  });
});
