import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { RowEvent } from '../../lib/events/index.js';
import type { Hooks } from '../../lib/hooks.js';
import { processRowEvent, type RowWorkerDeps } from '../../lib/workers/index.js';
import { dynamoStoreForFile } from '../support/dynamo.js';
import {
  at,
  contactWorker,
  lambdaContext,
  quietObservability,
  rowEvent,
  sqsEvent,
  sqsRecord,
} from '../support/workers.js';

const NOW = new Date('2025-05-14T12:00:00.000Z');
const db = dynamoStoreForFile({ now: () => NOW });
let deps: RowWorkerDeps;

beforeEach(() => {
  deps = { store: db.store, hooks: {}, ignoreAssociateIds: new Set([99]), ...quietObservability() };
});

const meta = { messageId: 'm-1', signatureVerified: true, receivedAt: '2025-05-14T12:00:01.000Z' };
let nextKey = 1000;
const row = () => ({ primaryKey: nextKey++, context: 'CustRows' });

describe('row worker against dynalite', () => {
  it('created → changed → softdeleted → deleted, with history and TTL', async () => {
    const key = row();
    const events: RowEvent[] = [
      rowEvent('contact.created', { ...key, timestamp: at(1) }),
      rowEvent('contact.changed', { ...key, timestamp: at(2) }),
      rowEvent('contact.softdeleted', { ...key, timestamp: at(3) }),
      rowEvent('contact.deleted', { ...key, timestamp: at(4) }),
    ];
    const statuses: string[] = [];
    for (const event of events) statuses.push((await processRowEvent(deps, event, meta)).row!.status);

    expect(statuses).toEqual(['active', 'active', 'softdeleted', 'deleted']);
    const stored = await db.store.getRow(key.context, 'contact', key.primaryKey);
    expect(stored).toMatchObject({
      status: 'deleted',
      fieldValues: events[0]!.FieldValues,
      values: events[3]!.Values,
      lastEventId: events[3]!.EventId,
      lastEvent: 'contact.deleted',
      eventCount: 4,
    });
    expect(stored!.changedFields).toEqual(expect.arrayContaining(['department', 'deleted', 'DeletedDate']));

    const history = await db.store.listRowEvents(key.context, 'contact', key.primaryKey);
    expect(history.map((record) => record.eventId)).toEqual(events.map((event) => event.EventId));
    expect(history[0]).toMatchObject({
      eventName: 'contact.created',
      echo: false,
      signatureVerified: true,
      receivedAt: meta.receivedAt,
      recordedAt: NOW.toISOString(),
      expiresAt: NOW.getTime() / 1000 + 30 * 86_400,
      payload: events[0],
    });
  });

  it('a late event is recorded and merged without moving the row back; a duplicate changes nothing', async () => {
    const key = row();
    const created = rowEvent('contact.created', { ...key, timestamp: at(1) });
    const newer = rowEvent('contact.changed', { ...key, timestamp: at(5) });
    const late = {
      ...rowEvent('contact.changed', { ...key, timestamp: at(3) }),
      Changes: ['name'],
    } as RowEvent;

    await processRowEvent(deps, created, meta);
    await processRowEvent(deps, newer, meta);
    const lateResult = await processRowEvent(deps, late, meta);
    expect(lateResult.outcome).toBe('late');
    expect(lateResult.row!.lastEventId).toBe(newer.EventId);
    expect(lateResult.row!.changedFields).toContain('name');

    const before = await db.store.getRow(key.context, 'contact', key.primaryKey);
    const again = await processRowEvent(deps, newer, meta);
    expect(again.outcome).toBe('duplicate');
    expect(await db.store.getRow(key.context, 'contact', key.primaryKey)).toEqual(before);
    expect(await db.store.listRowEvents(key.context, 'contact', key.primaryKey)).toHaveLength(3);
  });

  it('a redelivery a week later is a no-op, also when the event has left the recent window', async () => {
    const key = row();
    const created = rowEvent('contact.created', { ...key, timestamp: at(0) });
    await processRowEvent(deps, created, meta);
    for (let i = 1; i <= 10; i++) {
      await processRowEvent(deps, rowEvent('contact.changed', { ...key, timestamp: at(i) }), meta);
    }
    const before = await db.store.getRow(key.context, 'contact', key.primaryKey);
    expect(before!.recentSeqs.some((seq) => seq.endsWith(created.EventId))).toBe(false);
    const result = await processRowEvent(deps, created, meta);
    expect(result.outcome).toBe('duplicate');
    expect(await db.store.getRow(key.context, 'contact', key.primaryKey)).toEqual(before);
  });

  it('an echo is recorded and applied but never reaches the hooks', async () => {
    const key = row();
    const onContactChanged = vi.fn();
    const hooks: Hooks = { onContactChanged };
    const echo = rowEvent('contact.changed', { ...key, timestamp: at(2), changedByAssociateId: 99 });
    const own = rowEvent('contact.changed', { ...key, timestamp: at(3), changedByAssociateId: 5 });

    expect((await processRowEvent({ ...deps, hooks }, echo, meta)).echo).toBe(true);
    await processRowEvent({ ...deps, hooks }, own, meta);

    const history = await db.store.listRowEvents(key.context, 'contact', key.primaryKey);
    expect(history.map((record) => record.echo)).toEqual([true, false]);
    expect(onContactChanged).toHaveBeenCalledTimes(1);
    expect(onContactChanged).toHaveBeenCalledWith(
      own,
      expect.objectContaining({ lastEventId: own.EventId, eventCount: 2 }),
      { outcome: 'applied', messageId: 'm-1' },
    );
  });

  it('a failing hook fails the record after the row is written; the retry runs the hook again', async () => {
    const key = row();
    const created = rowEvent('activity.created', { ...key, timestamp: at(1) });
    const onActivityCreated = vi
      .fn()
      .mockRejectedValueOnce(new Error('downstream down'))
      .mockResolvedValue(undefined);
    const hooked = { ...deps, hooks: { onActivityCreated } };

    await expect(processRowEvent(hooked, created, meta)).rejects.toThrow(/hook failed/);
    expect(await db.store.getRow(key.context, 'activity', key.primaryKey)).toMatchObject({ eventCount: 1 });

    const retry = await processRowEvent(hooked, created, meta);
    expect(retry.outcome).toBe('duplicate');
    expect(onActivityCreated).toHaveBeenCalledTimes(2);
  });

  it('retries the merge when another writer moved the row in between', async () => {
    const key = row();
    const first = rowEvent('contact.created', { ...key, timestamp: at(1) });
    const second = rowEvent('contact.changed', { ...key, timestamp: at(2) });
    let raced = false;
    const racing: RowWorkerDeps['store'] = {
      ...db.store,
      async loadRow(...args) {
        const loaded = await db.store.loadRow(...args);
        if (!raced) {
          raced = true;
          await processRowEvent(deps, first, meta); // someone else writes between our read and write
        }
        return loaded;
      },
    };
    const result = await processRowEvent({ ...deps, store: racing }, second, meta);
    expect(result.row).toMatchObject({ eventCount: 2, lastEventId: second.EventId });
    expect(result.row!.fieldValues).toEqual(first.FieldValues);
  });

  it('keeps the last accepted event per context and WebhookName, never lowering it', async () => {
    const key = { ...row(), context: 'CustAccepted' };
    const newer = rowEvent('contact.changed', { ...key, timestamp: at(9), webhookName: 'hook-a' });
    const older = rowEvent('contact.changed', { ...key, timestamp: at(4), webhookName: 'hook-a' });
    const worker = contactWorker(db.store);
    await worker(sqsEvent([sqsRecord(newer)]), lambdaContext);
    await worker(sqsEvent([sqsRecord(older)]), lambdaContext);
    expect(await db.store.getLastAccepted('CustAccepted', 'hook-a')).toMatchObject({
      eventId: newer.EventId,
      timestamp: newer.Timestamp,
    });
    expect(await db.store.getLastAccepted('CustAccepted', 'hook-b')).toBeUndefined();
  });
});
