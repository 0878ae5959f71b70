import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Store } from '../../lib/store/types.js';
import { createRowWorker } from '../../lib/workers/index.js';
import { type LocalDynamo, startDynamoStore } from '../support/dynamo.js';
import { at, lambdaContext, quietObservability, rowEvent, sqsEvent, sqsRecord } from '../support/workers.js';

let dynamo: LocalDynamo;
let store: Store;

beforeAll(async () => {
  ({ dynamo, store } = await startDynamoStore());
});
afterAll(() => dynamo.close());

const worker = (markAccepted: Store['markAccepted']) =>
  createRowWorker({
    entity: 'contact',
    store: { ...store, markAccepted },
    hooks: {},
    ignoreAssociateIds: new Set(),
    ...quietObservability(),
  });

describe('last-accepted markers per batch', () => {
  it('writes one marker per context and WebhookName, with the newest event of the batch', async () => {
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
    const markAccepted = vi.fn(store.markAccepted);

    const response = await worker(markAccepted)(sqsEvent(records), lambdaContext);

    expect(response.batchItemFailures).toEqual([]);
    expect(markAccepted).toHaveBeenCalledTimes(3);
    expect(await store.getLastAccepted('CustMarkA', 'hook-1')).toMatchObject({
      eventId: newest.EventId,
      timestamp: newest.Timestamp,
    });
    expect(await store.getLastAccepted('CustMarkA', 'hook-2')).toMatchObject({ timestamp: at(7) });
    expect(await store.getLastAccepted('CustMarkB', 'hook-1')).toMatchObject({ timestamp: at(3) });
  });

  it('never lowers the marker: an older batch after a newer one leaves it', async () => {
    const key = { context: 'CustMarkC', primaryKey: 1 };
    const newer = rowEvent('contact.changed', { ...key, timestamp: at(20) });
    const run = worker(store.markAccepted);
    await run(sqsEvent([sqsRecord(newer)]), lambdaContext);
    await run(
      sqsEvent([sqsRecord(rowEvent('contact.changed', { ...key, timestamp: at(10) }))]),
      lambdaContext,
    );
    expect(await store.getLastAccepted('CustMarkC', 'crm-webhook-receiver')).toMatchObject({
      eventId: newer.EventId,
    });
  });

  it('a marker that cannot be written retries its records (and the rest of their groups), nothing else', async () => {
    const failing = { context: 'CustMarkD' };
    const d1 = sqsRecord(rowEvent('contact.created', { ...failing, primaryKey: 1, timestamp: at(1) }));
    const e1 = sqsRecord(
      rowEvent('contact.created', { context: 'CustMarkE', primaryKey: 1, timestamp: at(1) }),
    );
    const d2 = sqsRecord(rowEvent('contact.changed', { ...failing, primaryKey: 1, timestamp: at(2) }));
    const markAccepted = vi.fn<Store['markAccepted']>(async (context, webhookName, accepted) => {
      if (context === 'CustMarkD') throw new Error('throttled');
      await store.markAccepted(context, webhookName, accepted);
    });

    const response = await worker(markAccepted)(sqsEvent([d1, e1, d2]), lambdaContext);

    expect(response.batchItemFailures).toEqual([
      { itemIdentifier: d1.messageId },
      { itemIdentifier: d2.messageId },
    ]);
    expect(await store.getRow('CustMarkD', 'contact', 1)).toMatchObject({ eventCount: 2 }); // applied all the same
    expect(await store.getLastAccepted('CustMarkE', 'crm-webhook-receiver')).toBeDefined();

    // the retry finds both events merged and writes the marker
    const retry = await worker(store.markAccepted)(sqsEvent([d1, d2]), lambdaContext);
    expect(retry.batchItemFailures).toEqual([]);
    expect(await store.getLastAccepted('CustMarkD', 'crm-webhook-receiver')).toMatchObject({
      timestamp: at(2),
    });
    expect(await store.getRow('CustMarkD', 'contact', 1)).toMatchObject({ eventCount: 2 });
  });

  it('a WebhookName too long for a sort key still gets its marker, and the state worker finds it', async () => {
    const webhookName = `hook-${'w'.repeat(1100)}`; // over DynamoDB's 1,024-byte sort key
    const event = rowEvent('contact.created', {
      context: 'CustMarkLong',
      primaryKey: 1,
      timestamp: at(4),
      webhookName,
    });

    const response = await worker(store.markAccepted)(sqsEvent([sqsRecord(event)]), lambdaContext);

    expect(response.batchItemFailures).toEqual([]);
    expect(await store.getLastAccepted('CustMarkLong', webhookName)).toMatchObject({
      eventId: event.EventId,
    });
    expect(await store.getLastAccepted('CustMarkLong', `hook-${'w'.repeat(1099)}x`)).toBeUndefined();
  });

  it('skips a write that would not move the marker forward from what the worker already wrote', async () => {
    const key = { context: 'CustMarkSkip', primaryKey: 1 };
    const markAccepted = vi.fn(store.markAccepted);
    const run = worker(markAccepted);
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
    expect(await store.getLastAccepted('CustMarkSkip', 'crm-webhook-receiver')).toMatchObject({
      timestamp: at(30),
    });
  });
});
