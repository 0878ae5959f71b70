import { describe, expect, it } from 'vitest';
import { type RowEvent, validEvent } from '../../lib/events/index.js';
import type { Row } from '../../lib/model/types.js';
import { apply } from '../../lib/projection.js';
import { RECENT_WINDOW } from '../../lib/recognition.js';
import { snapshotMessage } from '../../lib/reconcile/run/snapshot-message.js';
import { NEVER } from '../../tools/crm/tables.js';
import { at, rowEvent } from '../support/workers.js';

const fold = (events: RowEvent[], start?: Row): Row =>
  events.reduce<Row | undefined>((row, e) => apply(row, e), start)!;

describe('apply: contact lifecycle in order', () => {
  const created = rowEvent('contact.created', { primaryKey: 42, timestamp: at(1) });
  const changed = rowEvent('contact.changed', { primaryKey: 42, timestamp: at(2) });
  const softdeleted = rowEvent('contact.softdeleted', { primaryKey: 42, timestamp: at(3) });
  const deleted = rowEvent('contact.deleted', { primaryKey: 42, timestamp: at(4) });

  it('created keeps FieldValues as delivered and nothing is stale', () => {
    const row = apply(undefined, created);
    expect(row).toMatchObject({
      context: 'Cust12345',
      entity: 'contact',
      primaryKey: 42,
      status: 'active',
      fieldValues: created.FieldValues,
      fieldValuesTimestamp: created.Timestamp,
      changedFields: [],
      lastEventId: created.EventId,
      lastEvent: 'contact.created',
      lastTimestamp: created.Timestamp,
      changedByAssociateId: 5,
      eventCount: 1,
      createdAt: created.Timestamp,
    });
  });

  it('changed names the stale fields and keeps the FieldValues', () => {
    const row = fold([created, changed]);
    expect(row.fieldValues).toEqual(created.FieldValues);
    expect(row.changedFields).toEqual([...changed.Changes].sort());
    expect(row).toMatchObject({ status: 'active', lastEvent: 'contact.changed', eventCount: 2 });
  });

  it('softdeleted → softdeleted, its Changes are stale too; deleted → deleted with the Values', () => {
    const soft = fold([created, changed, softdeleted]);
    expect(soft.status).toBe('softdeleted');
    expect(soft.softDeletedAt).toBe(softdeleted.Timestamp);
    expect(soft.changedFields).toEqual(expect.arrayContaining(['deleted', 'DeletedDate', 'department']));

    const gone = apply(soft, deleted);
    expect(gone).toMatchObject({
      status: 'deleted',
      values: deleted.Values,
      deletedAt: deleted.Timestamp,
      lastEvent: 'contact.deleted',
      eventCount: 4,
      fieldValues: created.FieldValues,
    });
  });

  it('a changed after softdeleted restores the row (softDeletedAt stays)', () => {
    const restore = rowEvent('contact.changed', { primaryKey: 42, timestamp: at(3.5), eventId: undefined });
    const row = fold([created, softdeleted, restore]);
    expect(row.status).toBe('active');
    expect(row.softDeletedAt).toBe(softdeleted.Timestamp);
  });

  it('a deleted row stays deleted whatever comes after', () => {
    const after = rowEvent('contact.changed', { primaryKey: 42, timestamp: at(9) });
    const recreated = rowEvent('contact.created', { primaryKey: 42, timestamp: at(10) });
    const row = fold([created, deleted, after, recreated]);
    expect(row.status).toBe('deleted');
    expect(row.deletedAt).toBe(deleted.Timestamp);
    expect(row.lastEventId).toBe(recreated.EventId);
  });
});

describe('apply: late and duplicate events', () => {
  const created = rowEvent('contact.created', { primaryKey: 7, timestamp: at(1) });
  const first = rowEvent('contact.changed', { primaryKey: 7, timestamp: at(2) });
  const second = {
    ...rowEvent('contact.changed', { primaryKey: 7, timestamp: at(3) }),
    Changes: ['name'],
  } as RowEvent;

  it('a late changed adds its fields but does not move the row back', () => {
    const row = fold([created, second, first]);
    expect(row.lastEventId).toBe(second.EventId);
    expect(row.changedFields).toEqual([...new Set([...first.Changes, 'name'])].sort());
    expect(row.eventCount).toBe(3);
  });

  it('a late created after a changed fills FieldValues; the changed fields stay stale', () => {
    const row = fold([first, created]);
    expect(row.fieldValues).toEqual(created.FieldValues);
    expect(row.changedFields).toEqual([...first.Changes].sort());
    expect(row.lastEventId).toBe(first.EventId);
    expect(row.createdAt).toBe(created.Timestamp);
    expect(row).toEqual(fold([created, first]));
  });

  it('a newer created replaces FieldValues and clears what it covers', () => {
    const again = rowEvent('contact.created', { primaryKey: 7, timestamp: at(5) });
    const row = fold([created, first, again]);
    expect(row.fieldValuesTimestamp).toBe(again.Timestamp);
    expect(row.changedFields).toEqual([]);
    expect(row.createdAt).toBe(created.Timestamp);
  });

  it('re-applying an event returns the very same row', () => {
    const row = fold([created, first, second]);
    expect(apply(row, first)).toBe(row);
    expect(apply(row, second)).toBe(row);
    expect(apply(row, created)).toBe(row);
  });

  it('ties on Timestamp are broken by EventId, and 6 or 7 fraction digits compare equal', () => {
    const a = rowEvent('contact.changed', {
      primaryKey: 7,
      timestamp: '2025-05-14T12:00:00.089895Z',
      eventId: '00000000-0000-4000-8000-000000000001',
    });
    const b = rowEvent('contact.changed', {
      primaryKey: 7,
      timestamp: '2025-05-14T12:00:00.0898950Z',
      eventId: '00000000-0000-4000-8000-000000000002',
    });
    expect(apply(apply(undefined, b), a).lastEventId).toBe(b.EventId);
    expect(apply(apply(undefined, a), b).lastEventId).toBe(b.EventId);
  });

  it('an event older than the recent window counts once when the history says it was seen', () => {
    const newer = Array.from({ length: RECENT_WINDOW + 2 }, (_, i) =>
      rowEvent('contact.changed', { primaryKey: 7, timestamp: at(10 + i) }),
    );
    const row = fold([created, ...newer]);
    expect(row.recentSeqs).toHaveLength(RECENT_WINDOW);
    expect(apply(row, created, { seenBefore: true })).toBe(row);
    const lateNew = rowEvent('contact.changed', { primaryKey: 7, timestamp: at(2) });
    expect(apply(row, lateNew, { seenBefore: false }).eventCount).toBe(row.eventCount + 1);
  });

  it('a re-merge that changes nothing returns the row read back, whatever its key order; one that does, a new row', () => {
    const newer = Array.from({ length: RECENT_WINDOW + 2 }, (_, i) =>
      rowEvent('contact.changed', { primaryKey: 7, timestamp: at(10 + i) }),
    );
    // As a store might hand it back: the same row with its keys in another order.
    const folded = fold([created, ...newer]);
    const readBack = Object.fromEntries(Object.entries(folded).reverse()) as Row;
    expect(apply(readBack, created, { seenBefore: true })).toBe(readBack);
    expect(apply(readBack, created, { eventCount: readBack.eventCount })).toBe(readBack);
    const recounted = apply(readBack, created, { eventCount: readBack.eventCount + 1 });
    expect(recounted).not.toBe(readBack);
    expect(recounted.eventCount).toBe(readBack.eventCount + 1);
  });
});

describe('apply: activity', () => {
  it('created → changed → deleted', () => {
    const created = rowEvent('activity.created', { primaryKey: 9, timestamp: at(1) });
    const changed = rowEvent('activity.changed', { primaryKey: 9, timestamp: at(2) });
    const deleted = rowEvent('activity.deleted', { primaryKey: 9, timestamp: at(3) });
    const row = fold([created, changed, deleted]);
    expect(row).toMatchObject({
      entity: 'activity',
      status: 'deleted',
      values: deleted.Values,
      eventCount: 3,
    });
    expect(row.changedFields).toEqual([...changed.Changes].sort());
  });
});

describe('apply: a snapshot of a row the CRM holds soft-deleted', () => {
  const created = rowEvent('contact.created', { primaryKey: 42, timestamp: at(1) });
  /** A snapshot at `seconds` of the created row with `deleted` (and DeletedDate) as the CRM writes them. */
  const snapshot = (seconds: number, deleted: 0 | 1, entity = 'contact') => {
    const fieldValues = {
      ...created.FieldValues,
      deleted,
      DeletedDate: deleted ? at(3).slice(0, -1) : NEVER,
    };
    const message = snapshotMessage({
      context: created.ContextIdentifier,
      entity,
      primaryKey: 42,
      fetchedAt: new Date(at(seconds)),
      fieldValues: JSON.stringify(fieldValues),
    });
    return validEvent(JSON.parse(String(message.body))) as RowEvent;
  };

  it('is softdeleted, as the softdeleted event nobody heard of would have made it; a later snapshot with deleted 0 restores it', () => {
    const gone = snapshot(5, 1);
    const soft = fold([created, gone]);
    expect(soft).toMatchObject({ status: 'softdeleted', softDeletedAt: gone.Timestamp, changedFields: [] });
    expect(soft.fieldValues).toMatchObject({ deleted: 1 });

    expect(fold([created, snapshot(5, 1), snapshot(9, 0)])).toMatchObject({ status: 'active' });
    // In any order: the newest snapshot decides.
    expect(fold([snapshot(9, 0), created, snapshot(5, 1)])).toMatchObject({ status: 'active' });
    expect(fold([snapshot(5, 1), created])).toMatchObject({ status: 'softdeleted' });
  });

  it('stays active for an entity without soft deletes, whatever a deleted field says', () => {
    expect(fold([snapshot(5, 1, 'sale')]).status).toBe('active');
  });
});
