import { describe, expect, it } from 'vitest';
import { entrySize, MAX_DETAIL_DEPTH, MAX_ENTRY_BYTES } from '../../lib/bus/entry.js';
import { nestingDepth } from '../../lib/bus/limits.js';
import type { RowEvent } from '../../lib/events/index.js';
import { dynamoStoreForFile } from '../support/dynamo.js';
import {
  at,
  lambdaContext,
  publishingContactWorker,
  rowEvent,
  sqsEvent,
  sqsRecord,
} from '../support/workers.js';

/*
 * Changes from the sender, through the real worker, dynalite and the bus entry: very long ones
 * and field names that are also names of Object.prototype's members (item 9).
 */

const db = dynamoStoreForFile();

function setup() {
  const { bus, worker } = publishingContactWorker(db.store, { bookkeeping: ['updated'] });
  /** Handles the events, one batch each, and returns the records that failed. */
  const handle = async (...events: RowEvent[]) => {
    const failed: string[] = [];
    for (const event of events) {
      const response = await worker(sqsEvent([sqsRecord(event)]), lambdaContext);
      failed.push(...response.batchItemFailures.map((failure) => failure.itemIdentifier));
    }
    return failed;
  };
  return { bus, handle, worker };
}

const changed = (context: string, seconds: number, changes: string[]): RowEvent => ({
  ...rowEvent('contact.changed', { context, primaryKey: 1, timestamp: at(seconds) }),
  Changes: changes,
});

describe('a delivery nested deeper than PutEvents processes', () => {
  it('a custom property 9,000 arrays deep: applied, published without it, not dead-lettered', async () => {
    const { bus, worker } = setup();
    const created = rowEvent('contact.created', { context: 'CustDeep', primaryKey: 1, timestamp: at(0) });
    // Written by hand: JSON.stringify itself runs out of stack this deep.
    const raw = `${JSON.stringify(created).slice(0, -1)},"Custom":${'['.repeat(9000)}1${']'.repeat(9000)}}`;

    const response = await worker(sqsEvent([sqsRecord(created, { raw })]), lambdaContext);

    expect(response.batchItemFailures).toEqual([]);
    expect((await db.store.getRow('CustDeep', 'contact', 1))?.lastEventId).toBe(created.EventId);
    const entry = bus.published.at(-1)!;
    expect(nestingDepth(entry.Detail)).toBeLessThanOrEqual(MAX_DETAIL_DEPTH);
    expect(JSON.parse(entry.Detail)).toMatchObject({
      truncated: true,
      dropped: ['row.fieldValues', 'FieldValues', 'customProperties'],
    });
  });
});

describe('a change naming thousands of fields', () => {
  it('6,000 fields (114 KB): applied, published without the row’s list of them, not dead-lettered', async () => {
    const { bus, handle } = setup();
    const fields = Array.from({ length: 6000 }, (_, i) => `custom_field_${String(i).padStart(4, '0')}`);
    const created = rowEvent('contact.created', { context: 'CustLong', primaryKey: 1, timestamp: at(0) });
    const change = changed('CustLong', 1, fields);
    expect(Buffer.byteLength(JSON.stringify(change))).toBeGreaterThan(114_000);

    const failed = await handle(created, change);

    expect(failed).toEqual([]);
    expect((await db.store.getRow('CustLong', 'contact', 1))?.changedFields).toEqual(fields);
    const entry = bus.published.at(-1)!;
    expect(entrySize(entry)).toBeLessThanOrEqual(MAX_ENTRY_BYTES);
    const detail = JSON.parse(entry.Detail);
    expect(detail).toMatchObject({
      EventId: change.EventId,
      truncated: true,
      dropped: ['row.changedFields'],
    });
    expect(detail.Changes).toEqual(fields);
    expect(detail.significantChanges).toEqual(fields);
    expect(detail.row).toMatchObject({ status: 'active', fieldValues: created.FieldValues });
  });

  it('20,000 fields (already queued, over the ingest’s limit): merged in one pass and published, nothing dead-lettered', async () => {
    // Before the merge was linear this took about a minute (each field copied the map of the fields).
    const { bus, handle } = setup();
    const fields = Array.from({ length: 20_000 }, (_, i) => `field_${i}`);

    const second = changed('CustLonger', 2, ['name', ...fields]);

    const failed = await handle(changed('CustLonger', 1, fields), second);

    expect(failed).toEqual([]);
    const row = await db.store.getRow('CustLonger', 'contact', 1);
    expect(row?.changedFields).toEqual(['name', ...fields].sort());
    expect(row?.eventCount).toBe(2);
    const details = bus.details();
    expect(details).toHaveLength(2);
    expect(details[1]).toMatchObject({ truncated: true, EventId: second.EventId, PrimaryKey: 1 });
    expect(details[1]).not.toHaveProperty('significantChanges');
    expect(details[1]).not.toHaveProperty('Changes');
    expect(details[1]!.dropped).toEqual([
      'row.changedFields',
      'WebhookName',
      'significantChanges',
      'Changes',
    ]);
  });
});

describe('field names that are also members of every JavaScript object', () => {
  const NAMES = ['constructor', 'toString', 'valueOf', '__proto__', 'hasOwnProperty', '__defineGetter__'];

  it.each(NAMES)(
    'a change naming "%s" marks it changed in the row, its history and the bus entry',
    async (name) => {
      const { bus, handle } = setup();
      const context = `CustProto${NAMES.indexOf(name)}`;
      const created = rowEvent('contact.created', { context, primaryKey: 1, timestamp: at(0) });
      const first = changed(context, 2, [name, 'department']);
      const late = changed(context, 1, [name]); // older: the field keeps the newer change's order key

      const failed = await handle(created, first, late);

      expect(failed).toEqual([]);
      const row = (await db.store.getRow(context, 'contact', 1))!;
      expect(row.changedFields).toEqual(['department', name].sort());
      expect(Object.hasOwn(row.changedFieldSeqs, name)).toBe(true);
      expect(row.changedFieldSeqs[name]).toBe(row.changedFieldSeqs.department);
      const [, firstEntry, lateEntry] = bus.details();
      expect(firstEntry).toMatchObject({ significantChanges: [name, 'department'] });
      expect((firstEntry!.row as { changedFields: string[] }).changedFields).toEqual(row.changedFields);
      expect(lateEntry).toMatchObject({ outcome: 'late', significantChanges: [name] });
    },
  );
});
