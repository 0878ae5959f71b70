import { describe, expect, it, vi } from 'vitest';
import type { Store } from '../../lib/store/types.js';
import {
  ACCEPTED_MARKER_INTERVAL_MS,
  type AcceptedMarkerOptions,
  createRowWorker,
} from '../../lib/workers/index.js';
import { dynamoStoreForFile } from '../support/dynamo.js';
import { at, lambdaContext, rowEvent, rowWorkerDeps, sqsEvent, sqsRecord } from '../support/workers.js';

const db = dynamoStoreForFile();

const worker = (markAccepted: Store['markAccepted'], markers?: AcceptedMarkerOptions) =>
  createRowWorker({
    entity: 'contact',
    ...rowWorkerDeps({ ...db.store, markAccepted }),
    ...(markers && { markers }),
  });

describe('last-accepted markers, at most once per interval', () => {
  it('writes a marker the first time the worker sees its context and WebhookName, with that event', async () => {
    const a = { context: 'CustMarkA', webhookName: 'hook-1' };
    const newest = rowEvent('contact.changed', { ...a, primaryKey: 2, timestamp: at(9) });
    const records = [
      rowEvent('contact.created', { ...a, primaryKey: 1, timestamp: at(1) }),
      newest,
      rowEvent('contact.changed', { ...a, primaryKey: 1, timestamp: at(5) }),
      rowEvent('contact.changed', { ...a, primaryKey: 3, timestamp: at(7), webhookName: 'hook-2' }),
      rowEvent('contact.changed', {
        context: 'CustMarkB',
        primaryKey: 1,
        timestamp: at(3),
        webhookName: 'hook-1',
      }),
    ].map((event) => sqsRecord(event));
    const markAccepted = vi.fn(db.store.markAccepted);

    const response = await worker(markAccepted)(sqsEvent(records), lambdaContext);

    expect(response.batchItemFailures).toEqual([]);
    expect(markAccepted).toHaveBeenCalledTimes(3);
    // the first event of CustMarkA/hook-1; the newer ones wait for the next write (a lag, never ahead)
    expect(await db.store.getLastAccepted('CustMarkA', 'hook-1')).toMatchObject({ timestamp: at(1) });
    expect(newest.Timestamp > at(1)).toBe(true);
    expect(await db.store.getLastAccepted('CustMarkA', 'hook-2')).toMatchObject({ timestamp: at(7) });
    expect(await db.store.getLastAccepted('CustMarkB', 'hook-1')).toMatchObject({ timestamp: at(3) });
  });

  it('never lowers the marker: an older batch after a newer one leaves it', async () => {
    const key = { context: 'CustMarkC', primaryKey: 1 };
    const newer = rowEvent('contact.changed', { ...key, timestamp: at(20) });
    const run = worker(db.store.markAccepted, { intervalMs: 0 });
    await run(sqsEvent([sqsRecord(newer)]), lambdaContext);
    await run(
      sqsEvent([sqsRecord(rowEvent('contact.changed', { ...key, timestamp: at(10) }))]),
      lambdaContext,
    );
    expect(await db.store.getLastAccepted('CustMarkC', 'crm-webhook-receiver')).toMatchObject({
      eventId: newer.EventId,
    });
  });

  it('a marker that cannot be written retries its record (and the rest of its group), nothing else', async () => {
    const failing = { context: 'CustMarkD' };
    const d1 = sqsRecord(rowEvent('contact.created', { ...failing, primaryKey: 1, timestamp: at(1) }));
    const e1 = sqsRecord(
      rowEvent('contact.created', { context: 'CustMarkE', primaryKey: 1, timestamp: at(1) }),
    );
    const d2 = sqsRecord(rowEvent('contact.changed', { ...failing, primaryKey: 1, timestamp: at(2) }));
    const markAccepted = vi.fn<Store['markAccepted']>(async (context, webhookName, accepted) => {
      if (context === 'CustMarkD') throw new Error('throttled');
      await db.store.markAccepted(context, webhookName, accepted);
    });

    const response = await worker(markAccepted)(sqsEvent([d1, e1, d2]), lambdaContext);

    expect(response.batchItemFailures).toEqual([
      { itemIdentifier: d1.messageId },
      { itemIdentifier: d2.messageId },
    ]);
    // d1 is merged all the same; d2 waits behind it in its group
    expect(await db.store.getRow('CustMarkD', 'contact', 1)).toMatchObject({ eventCount: 1 });
    expect(await db.store.getLastAccepted('CustMarkD', 'crm-webhook-receiver')).toBeUndefined();
    expect(await db.store.getLastAccepted('CustMarkE', 'crm-webhook-receiver')).toBeDefined();

    // the retry finds d1 merged, writes its marker, then merges d2 and raises the marker to it
    const retry = await worker(db.store.markAccepted, { intervalMs: 0 })(sqsEvent([d1, d2]), lambdaContext);
    expect(retry.batchItemFailures).toEqual([]);
    expect(await db.store.getLastAccepted('CustMarkD', 'crm-webhook-receiver')).toMatchObject({
      timestamp: at(2),
    });
    expect(await db.store.getRow('CustMarkD', 'contact', 1)).toMatchObject({ eventCount: 2 });
  });

  it('a WebhookName too long for a sort key still gets its marker, and the state worker finds it', async () => {
    const webhookName = `hook-${'w'.repeat(1100)}`; // over DynamoDB's 1,024-byte sort key
    const event = rowEvent('contact.created', {
      context: 'CustMarkLong',
      primaryKey: 1,
      timestamp: at(4),
      webhookName,
    });

    const response = await worker(db.store.markAccepted)(sqsEvent([sqsRecord(event)]), lambdaContext);

    expect(response.batchItemFailures).toEqual([]);
    expect(await db.store.getLastAccepted('CustMarkLong', webhookName)).toMatchObject({
      eventId: event.EventId,
    });
    expect(await db.store.getLastAccepted('CustMarkLong', `hook-${'w'.repeat(1099)}x`)).toBeUndefined();
  });

  it('skips a write that would not move the marker forward from what the worker already wrote', async () => {
    const key = { context: 'CustMarkSkip', primaryKey: 1 };
    const markAccepted = vi.fn(db.store.markAccepted);
    const run = worker(markAccepted, { intervalMs: 0 });
    const newer = sqsRecord(rowEvent('contact.changed', { ...key, timestamp: at(20) }));

    await run(sqsEvent([newer]), lambdaContext);
    await run(
      sqsEvent([sqsRecord(rowEvent('contact.changed', { ...key, timestamp: at(10) }))]),
      lambdaContext,
    );
    await run(sqsEvent([newer]), lambdaContext); // a redelivery
    expect(markAccepted).toHaveBeenCalledTimes(1);

    await run(
      sqsEvent([sqsRecord(rowEvent('contact.changed', { ...key, timestamp: at(30) }))]),
      lambdaContext,
    );
    expect(markAccepted).toHaveBeenCalledTimes(2);
    expect(await db.store.getLastAccepted('CustMarkSkip', 'crm-webhook-receiver')).toMatchObject({
      timestamp: at(30),
    });
  });

  it(`writes each marker at most once per ${ACCEPTED_MARKER_INTERVAL_MS / 1000} s, raised to the newest event merged when it is due`, async () => {
    const key = { context: 'CustMarkEvery', primaryKey: 1 };
    const markAccepted = vi.fn(db.store.markAccepted);
    let clock = Date.UTC(2026, 0, 1);
    const run = worker(markAccepted, { now: () => clock });
    const batch = (seconds: number[]) =>
      sqsEvent(seconds.map((s) => sqsRecord(rowEvent('contact.changed', { ...key, timestamp: at(s) }))));

    await run(batch([1, 2, 3]), lambdaContext);
    clock += 10_000;
    await run(batch([4]), lambdaContext);
    clock += 10_000;
    await run(batch([5, 6]), lambdaContext);
    expect(markAccepted).toHaveBeenCalledTimes(1); // 6 events, 3 batches, 20 s: one write
    expect(await db.store.getLastAccepted('CustMarkEvery', 'crm-webhook-receiver')).toMatchObject({
      timestamp: at(1),
    });

    clock += ACCEPTED_MARKER_INTERVAL_MS;
    await run(batch([7, 8]), lambdaContext);
    expect(markAccepted).toHaveBeenCalledTimes(2);
    expect(await db.store.getLastAccepted('CustMarkEvery', 'crm-webhook-receiver')).toMatchObject({
      timestamp: at(7),
    });
  });
});
