import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RowEvent } from '../../lib/events/index.js';
import { storeMisfit } from '../../lib/ingest/store-fit.js';
import { fitsStore, MAX_STORED_BODY_BYTES } from '../../lib/store/body-codec.js';
import { MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES } from '../../lib/store/keys.js';
import type { Store } from '../../lib/store/types.js';
import type { SqsBatchHandler } from '../../lib/workers/index.js';
import { type LocalDynamo, startDynamoStore } from '../support/dynamo.js';
import { contactWorker, lambdaContext, rowEvent, sqsEvent, sqsRecord } from '../support/workers.js';

/**
 * The ingest's store limits against dynalite: what `storeMisfit` lets through is applied by the real
 * row worker, and what it parks is what the store would refuse (so parking is needed, not cautious).
 */
let dynamo: LocalDynamo;
let worker: SqsBatchHandler;

beforeAll(async () => {
  let store: Store;
  ({ dynamo, store } = await startDynamoStore());
  worker = contactWorker(store);
});
afterAll(() => dynamo.close());

const atLimit = 'C'.repeat(MAX_PARTITION_KEY_BYTES - 'contact#42#'.length);
const nameAtLimit = 'w'.repeat(MAX_SORT_KEY_BYTES - 'accepted#'.length);

async function apply(event: RowEvent, raw = JSON.stringify(event)): Promise<number> {
  const response = await worker(sqsEvent([sqsRecord(event, { raw })]), lambdaContext);
  return response.batchItemFailures.length;
}

describe('store limits on dynalite', () => {
  it('applies an event whose keys are exactly at the limits', async () => {
    const event = rowEvent('contact.created', { primaryKey: 42, context: atLimit, webhookName: nameAtLimit });

    expect(storeMisfit(event, JSON.stringify(event))).toBeUndefined();
    expect(await apply(event)).toBe(0);
  });

  it('a ContextIdentifier one byte over is parked by the ingest, and the store would refuse it', async () => {
    const event = rowEvent('contact.created', { primaryKey: 42, context: `${atLimit}C`, webhookName: 'w' });

    expect(storeMisfit(event, JSON.stringify(event))?.reason).toBe('key-too-long');
    expect(await apply(event)).toBe(1);
  });

  it('a WebhookName too long for a sort key is applied: its marker is keyed by its hash', async () => {
    const event = rowEvent('contact.created', {
      primaryKey: 45,
      context: 'CustLimits',
      webhookName: `${nameAtLimit}w`,
    });

    expect(storeMisfit(event, JSON.stringify(event))).toBeUndefined();
    expect(await apply(event)).toBe(0);
  });

  it('applies a body that deflates to just under MAX_STORED_BODY_BYTES; the store refuses one far over', async () => {
    const base = rowEvent('contact.created', { primaryKey: 43, context: 'CustBody' });
    const fits = { ...base, Custom: randomBytes(MAX_STORED_BODY_BYTES * 0.74).toString('base64') };
    const over = {
      ...rowEvent('contact.created', { primaryKey: 44, context: 'CustBody' }),
      Custom: randomBytes(450 * 1024).toString('base64'),
    };

    expect([fitsStore(JSON.stringify(fits)), fitsStore(JSON.stringify(over))]).toEqual([true, false]);
    expect(await apply(fits)).toBe(0);
    expect(await apply(over)).toBe(1);
  });
});
