import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import type { RowEvent } from '../../lib/events/index.js';
import { eventSeq } from '../../lib/model/order-key.js';
import { RECENT_WINDOW } from '../../lib/recognition.js';
import type { Store } from '../../lib/store/types.js';
import { createRowWorker, processRowEvent } from '../../lib/workers/index.js';
import { dynamoStoreForFile } from '../support/dynamo.js';
import { at, lambdaContext, rowEvent, rowWorkerDeps, sqsEvent, sqsRecord } from '../support/workers.js';

const db = dynamoStoreForFile();

/** The real store, except that the row write of `failing` throws (a crash or throttle between the two writes). */
function faultyStore(failing: Set<string>): Store {
  return {
    ...db.store,
    async saveRow(row, version) {
      if (
        failing.has(row.lastEventId) ||
        [...failing].some((id) => row.recentSeqs.some((s) => s.endsWith(id)))
      )
        throw new Error('throttled');
      return db.store.saveRow(row, version);
    },
  };
}

/** The real store, except that before its first row write another handler processes `other` in full. */
function overtakenBy(other: RowEvent): Store {
  let first = true;
  return {
    ...db.store,
    async saveRow(row, version) {
      if (first) {
        first = false;
        await processRowEvent(rowWorkerDeps(db.store), other, meta);
      }
      return db.store.saveRow(row, version);
    },
  };
}

const meta = { messageId: 'm' };
let nextKey = 1;
const key = () => ({ context: 'CustCount', primaryKey: nextKey++ });

const newer = (k: { context: string; primaryKey: number }, from: number, count: number): RowEvent[] =>
  Array.from({ length: count }, (_, i) => rowEvent('contact.changed', { ...k, timestamp: at(from + i) }));

describe('eventCount equals the distinct events of the history after any failure', () => {
  it('a crash between history and row, then 8+ newer events merged, then the retry', async () => {
    const k = key();
    const first = rowEvent('contact.created', { ...k, timestamp: at(1) });
    await expect(
      processRowEvent(rowWorkerDeps(faultyStore(new Set([first.EventId]))), first, meta),
    ).rejects.toThrow('throttled');
    for (const event of newer(k, 2, 9)) await processRowEvent(rowWorkerDeps(db.store), event, meta);

    await processRowEvent(rowWorkerDeps(db.store), first, meta); // the retry

    const history = await db.store.listRowEvents(k.context, 'contact', k.primaryKey);
    expect(history).toHaveLength(10);
    const row = await db.store.getRow(k.context, 'contact', k.primaryKey);
    expect(row).toMatchObject({ eventCount: 10, createdAt: first.Timestamp });
    // a later redelivery of the same event changes nothing
    await processRowEvent(rowWorkerDeps(db.store), first, meta);
    expect((await db.store.getRow(k.context, 'contact', k.primaryKey))!.eventCount).toBe(10);
  });

  it('a DLQ redrive of a failed record behind 9 newer events', async () => {
    const k = key();
    const created = rowEvent('contact.created', { ...k, timestamp: at(1) });
    await processRowEvent(rowWorkerDeps(db.store), created, meta);
    const stuck = rowEvent('contact.changed', { ...k, timestamp: at(2) });
    const record = sqsRecord(stuck);
    const failing = createRowWorker({
      entity: 'contact',
      ...rowWorkerDeps(faultyStore(new Set([stuck.EventId]))),
    });
    for (let attempt = 0; attempt < 5; attempt++) {
      expect((await failing(sqsEvent([record]), lambdaContext)).batchItemFailures).toHaveLength(1);
    }
    const worker = createRowWorker({ entity: 'contact', ...rowWorkerDeps(db.store) });
    await worker(sqsEvent(newer(k, 3, 9).map((event) => sqsRecord(event))), lambdaContext);

    expect((await worker(sqsEvent([record]), lambdaContext)).batchItemFailures).toEqual([]); // the redrive

    const history = await db.store.listRowEvents(k.context, 'contact', k.primaryKey);
    expect(history.map((r) => r.eventId)).toContain(stuck.EventId);
    expect(await db.store.getRow(k.context, 'contact', k.primaryKey)).toMatchObject({
      eventCount: history.length,
    });
    expect(history).toHaveLength(11);
  });
});

describe('eventCount when the history write finds its own record (a retry inside one delivery)', () => {
  it('an event older than the window whose history write landed but whose answer was lost', async () => {
    const k = key();
    for (const event of newer(k, 2, 9)) await processRowEvent(rowWorkerDeps(db.store), event, meta);
    const old = rowEvent('contact.changed', { ...k, timestamp: at(1) });
    // The SDK's retry of a conditional put whose first attempt landed: the condition fails.
    const lostAnswer: Store = {
      ...db.store,
      async recordEvent(record) {
        await db.store.recordEvent(record);
        return false;
      },
    };

    await processRowEvent(rowWorkerDeps(lostAnswer), old, meta);

    expect(await db.store.listRowEvents(k.context, 'contact', k.primaryKey)).toHaveLength(10);
    expect((await db.store.getRow(k.context, 'contact', k.primaryKey))!.eventCount).toBe(10);
  });

  it('a retry whose row write meets a version conflict recounts after the event merged in between', async () => {
    const k = key();
    for (const event of newer(k, 1, 3)) await processRowEvent(rowWorkerDeps(db.store), event, meta);
    const stuck = rowEvent('contact.changed', { ...k, timestamp: at(10) });
    await expect(
      processRowEvent(rowWorkerDeps(faultyStore(new Set([stuck.EventId]))), stuck, meta),
    ).rejects.toThrow('throttled');
    const between = rowEvent('contact.changed', { ...k, timestamp: at(11) });
    await processRowEvent(rowWorkerDeps(overtakenBy(between)), stuck, meta); // the retry

    expect(await db.store.listRowEvents(k.context, 'contact', k.primaryKey)).toHaveLength(5);
    expect(await db.store.getRow(k.context, 'contact', k.primaryKey)).toMatchObject({
      eventCount: 5,
      lastEventId: between.EventId,
    });
  });
});

describe("eventCount when the row's window can tell", () => {
  it('a retry of an event within the window counts one more, without reading the history', async () => {
    const k = key();
    for (const event of newer(k, 1, 3)) await processRowEvent(rowWorkerDeps(db.store), event, meta);
    const stuck = rowEvent('contact.changed', { ...k, timestamp: at(10) });
    await expect(
      processRowEvent(rowWorkerDeps(faultyStore(new Set([stuck.EventId]))), stuck, meta),
    ).rejects.toThrow('throttled');
    // The history's two oldest records have expired (EVENT_RETENTION_DAYS): a recount would say 2.
    const listed = vi.fn();
    const expired: Store = {
      ...db.store,
      async listRowEvents(...args) {
        listed();
        return (await db.store.listRowEvents(...args)).slice(2);
      },
    };

    await processRowEvent(rowWorkerDeps(expired), stuck, meta); // the retry

    expect(await db.store.getRow(k.context, 'contact', k.primaryKey)).toMatchObject({
      eventCount: 4,
      lastEventId: stuck.EventId,
    });
    expect(listed).not.toHaveBeenCalled();
  });
});

describe('eventCount with events recorded but not merged yet (found by review)', () => {
  /** The real store, with every row write failing: an outage of the rows table. */
  const outage = (): Store => ({
    ...db.store,
    async saveRow() {
      throw new Error('throttled');
    },
  });

  it('a DLQ redrive of an old event, then of a newer one, counts each once', async () => {
    const k = key();
    for (const event of newer(k, 2, RECENT_WINDOW))
      await processRowEvent(rowWorkerDeps(db.store), event, meta);
    const late = rowEvent('contact.changed', { ...k, timestamp: at(1) });
    const pending = rowEvent('contact.changed', { ...k, timestamp: at(20) });
    // Both recorded during the outage, neither merged: both dead-lettered, in group order.
    for (const event of [late, pending]) {
      await expect(processRowEvent(rowWorkerDeps(outage()), event, meta)).rejects.toThrow('throttled');
    }

    for (const event of [late, pending]) await processRowEvent(rowWorkerDeps(db.store), event, meta); // the redrive

    const history = await db.store.listRowEvents(k.context, 'contact', k.primaryKey);
    expect(history).toHaveLength(RECENT_WINDOW + 2);
    expect(await db.store.getRow(k.context, 'contact', k.primaryKey)).toMatchObject({
      eventCount: RECENT_WINDOW + 2,
      lastEventId: pending.EventId,
    });
  });

  it('an old event handled twice at once (its visibility timeout ran out) counts once', async () => {
    const k = key();
    for (const event of newer(k, 2, RECENT_WINDOW))
      await processRowEvent(rowWorkerDeps(db.store), event, meta);
    const late = rowEvent('contact.changed', { ...k, timestamp: at(1) });
    // The first handler's row write comes after a second handler of the same message did it all.
    await processRowEvent(rowWorkerDeps(overtakenBy(late)), late, meta);

    expect(await db.store.listRowEvents(k.context, 'contact', k.primaryKey)).toHaveLength(RECENT_WINDOW + 1);
    expect((await db.store.getRow(k.context, 'contact', k.primaryKey))!.eventCount).toBe(RECENT_WINDOW + 1);
  });
});

describe('duplicates the sender really produces', () => {
  it('same EventId, later Timestamp, other body: recorded as a conflict; the row follows the first', async () => {
    const k = key();
    const first = rowEvent('contact.changed', { ...k, timestamp: at(1) });
    const later = { ...rowEvent('contact.changed', { ...k, timestamp: at(2) }), EventId: first.EventId };
    const sameTick = { ...first, Changes: ['name'] } as RowEvent;
    const d = rowWorkerDeps(db.store, { onContactChanged: vi.fn() });
    const metric = vi.spyOn(d.metrics, 'addMetric');
    const warn = vi.spyOn(d.logger, 'warn');

    await processRowEvent(d, first, meta);
    const rowBefore = await db.store.getRow(k.context, 'contact', k.primaryKey);
    expect((await processRowEvent(d, later, meta)).outcome).toBe('conflict');
    expect((await processRowEvent(d, sameTick, meta)).outcome).toBe('conflict');

    expect(await db.store.getRow(k.context, 'contact', k.primaryKey)).toEqual(rowBefore);
    const history = await db.store.listRowEvents(k.context, 'contact', k.primaryKey);
    expect(history.map((r) => [r.eventId, r.timestamp, r.conflictOf])).toEqual([
      [first.EventId, first.Timestamp, undefined],
      [first.EventId, first.Timestamp, eventSeq(first)],
      [first.EventId, later.Timestamp, eventSeq(first)],
    ]);
    expect(history[1]!.payload).toMatchObject({ Changes: ['name'] });
    expect(metric.mock.calls.filter(([name]) => name === 'EventIdConflicts')).toHaveLength(2);
    expect(warn).toHaveBeenCalledTimes(2);
    expect(d.hooks.onContactChanged).toHaveBeenCalledTimes(1);
    expect(rowBefore!.eventCount).toBe(1);
  });

  it('a conflict of an event older than the row’s window is found in the history', async () => {
    const k = key();
    const first = rowEvent('contact.changed', { ...k, timestamp: at(1) });
    await processRowEvent(rowWorkerDeps(db.store), first, meta);
    for (const event of newer(k, 2, 9)) await processRowEvent(rowWorkerDeps(db.store), event, meta);
    const conflicting = {
      ...rowEvent('contact.changed', { ...k, timestamp: at(1.5) }),
      EventId: first.EventId,
    };

    expect((await processRowEvent(rowWorkerDeps(db.store), conflicting, meta)).outcome).toBe('conflict');
    expect((await db.store.getRow(k.context, 'contact', k.primaryKey))!.eventCount).toBe(10);
  });

  it('a resend under a new EventId is recorded as a resend of the first: no count, no hook, no row change', async () => {
    const k = key();
    const first = rowEvent('contact.changed', { ...k, timestamp: at(1) });
    const resend = { ...first, EventId: randomUUID() };
    const onContactChanged = vi.fn();
    const d = rowWorkerDeps(db.store, { onContactChanged });

    await processRowEvent(d, first, meta);
    const before = await db.store.loadRow(k.context, 'contact', k.primaryKey);
    const result = await processRowEvent(d, resend, meta);
    await processRowEvent(d, resend, meta); // its own redelivery

    expect(result.outcome).toBe('resend');
    expect(await db.store.loadRow(k.context, 'contact', k.primaryKey)).toEqual(before);
    expect(onContactChanged).toHaveBeenCalledTimes(1);
    const history = await db.store.listRowEvents(k.context, 'contact', k.primaryKey);
    expect(history.map((r) => [r.eventId, r.resendOf])).toEqual(
      [
        [first.EventId, undefined],
        [resend.EventId, eventSeq(first)],
      ].sort((a, b) =>
        eventSeq({ Timestamp: first.Timestamp, EventId: a[0]! }) <
        eventSeq({ Timestamp: first.Timestamp, EventId: b[0]! })
          ? -1
          : 1,
      ),
    );
    expect(before.item!.eventCount).toBe(1);
  });

  it('a resend older than the row’s window is found in the history', async () => {
    const k = key();
    const first = rowEvent('contact.changed', { ...k, timestamp: at(1) });
    await processRowEvent(rowWorkerDeps(db.store), first, meta);
    for (const event of newer(k, 2, 9)) await processRowEvent(rowWorkerDeps(db.store), event, meta);

    expect(
      (await processRowEvent(rowWorkerDeps(db.store), { ...first, EventId: randomUUID() }, meta)).outcome,
    ).toBe('resend');
    expect((await db.store.getRow(k.context, 'contact', k.primaryKey))!.eventCount).toBe(10);
  });
});
