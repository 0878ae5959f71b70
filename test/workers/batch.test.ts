import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { SQSRecord } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { createFifoBatchHandler, createStateWorker } from '../../lib/workers/index.js';
import { buildSampleBody } from '../../tools/samples.js';
import { dynamoStoreForFile, FAKE_AWS_ENV, gapsIn } from '../support/dynamo.js';
import {
  at,
  contactWorker,
  lambdaContext,
  quietObservability,
  rowEvent,
  sqsEvent,
  sqsRecord,
  stateEvent,
} from '../support/workers.js';

const db = dynamoStoreForFile();

describe('FIFO partial batch failures', () => {
  it('a failed record fails the rest of its group; other groups go on', async () => {
    const a = { context: 'CustBatch', primaryKey: 1 };
    const b = { context: 'CustBatch', primaryKey: 2 };
    const a1 = sqsRecord(rowEvent('contact.created', { ...a, timestamp: at(1) }));
    const b1 = sqsRecord(rowEvent('contact.created', { ...b, timestamp: at(1) }));
    const a2 = sqsRecord(rowEvent('contact.changed', { ...a, timestamp: at(2) }));
    const b2 = sqsRecord(rowEvent('contact.changed', { ...b, timestamp: at(2) }));
    const a3 = sqsRecord(rowEvent('contact.changed', { ...a, timestamp: at(3) }));
    const onContactChanged = vi.fn(async (_event, row) => {
      if (row.primaryKey === 1) throw new Error('integrator bug');
    });
    const worker = contactWorker(db.store, { onContactChanged });

    const response = await worker(sqsEvent([a1, b1, a2, b2, a3]), lambdaContext);

    expect(response.batchItemFailures).toEqual([
      { itemIdentifier: a2.messageId },
      { itemIdentifier: a3.messageId },
    ]);
    expect(await db.store.getRow('CustBatch', 'contact', 2)).toMatchObject({ eventCount: 2 });
    // a2's row write happened before its hook failed; a3 was never touched, so it cannot overtake a2
    expect(await db.store.getRow('CustBatch', 'contact', 1)).toMatchObject({ eventCount: 2 });
    expect(await db.store.listRowEvents('CustBatch', 'contact', 1)).toHaveLength(2);
  });

  it('an unparseable body or a foreign event fails only its group', async () => {
    const good = sqsRecord(
      rowEvent('contact.created', { context: 'CustBad', primaryKey: 3, timestamp: at(1) }),
    );
    const notJson = {
      ...sqsRecord({}, { raw: '{not json' }),
      attributes: { ...good.attributes, MessageGroupId: 'x:contact:9' },
    };
    const activity = sqsRecord(rowEvent('activity.created', { context: 'CustBad', primaryKey: 4 }));
    const invalid = sqsRecord({ ...buildSampleBody('contact.changed'), PrimaryKey: 'seven' });
    const worker = contactWorker(db.store);

    const response = await worker(sqsEvent([notJson, good, activity, invalid]), lambdaContext);

    expect(response.batchItemFailures.map((failure) => failure.itemIdentifier)).toEqual([
      notJson.messageId,
      activity.messageId,
      invalid.messageId,
    ]);
    expect(await db.store.getRow('CustBad', 'contact', 3)).toBeDefined();
  });

  it('decodes base64 bodies (raw bytes that are not valid UTF-8 text are sent that way)', async () => {
    const body = rowEvent('contact.created', { context: 'CustB64', primaryKey: 5, webhookName: 'Café ✓' });
    const worker = contactWorker(db.store);
    const response = await worker(sqsEvent([sqsRecord(body, { base64: true })]), lambdaContext);
    expect(response.batchItemFailures).toEqual([]);
    const [record] = await db.store.listRowEvents('CustB64', 'contact', 5);
    expect(record!.payload).toEqual(body);
  });

  it('a record the batch step fails after all fails the rest of its group too, in batch order', async () => {
    const record = (primaryKey: number, seconds: number) =>
      sqsRecord(rowEvent('contact.changed', { context: 'CustSettle', primaryKey, timestamp: at(seconds) }));
    const a1 = record(1, 1);
    const b1 = record(2, 1);
    const a2 = record(1, 2);
    const b2 = record(2, 2);
    const c1 = record(3, 1);
    const b3 = record(2, 3);
    const handled: SQSRecord[] = [];
    const handler = createFifoBatchHandler(
      {
        async handleRecord(r) {
          if (r === a1) throw new Error('record failed');
          handled.push(r);
        },
        settle: async () => new Map([[b2.messageId, new Error('failed after all')]]),
      },
      quietObservability(),
    );

    const response = await handler(sqsEvent([a1, b1, a2, b2, c1, b3]), lambdaContext);

    expect(response.batchItemFailures).toEqual(
      [a1, a2, b2, b3].map((r) => ({ itemIdentifier: r.messageId })),
    );
    expect(handled).toEqual([b1, b2, c1, b3]); // a2 skipped: its group had failed before it
  });

  it('the state worker rejects row events and handles its own', async () => {
    const worker = createStateWorker({ store: db.store, hooks: {}, ...quietObservability() });
    const row = sqsRecord(rowEvent('contact.created', { context: 'CustSW' }));
    const state = sqsRecord(stateEvent('webhook.stopped', { context: 'CustSW', primaryKey: 8 }));
    const response = await worker(sqsEvent([row, state]), lambdaContext);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: row.messageId }]);
    expect((await db.store.loadWebhook('CustSW', 8)).item).toMatchObject({ state: 1, stateName: 'Stopped' });
  });
});

describe('entry points', () => {
  it('functions/*-worker.ts compose from the environment (endpoint from AWS_ENDPOINT_URL_DYNAMODB)', async () => {
    for (const [name, value] of Object.entries({
      ...FAKE_AWS_ENV,
      AWS_ENDPOINT_URL_DYNAMODB: db.dynamo.endpoint,
      ROWS_TABLE: db.tables.rows,
      EVENTS_TABLE: db.tables.events,
      WEBHOOKS_TABLE: db.tables.webhooks,
      IGNORE_ASSOCIATE_IDS: '99, 100',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      POWERTOOLS_METRICS_DISABLED: 'true',
    })) {
      vi.stubEnv(name, value);
    }
    vi.resetModules();
    const contact = await import('../../functions/contact-worker.js');
    const activity = await import('../../functions/activity-worker.js');
    const state = await import('../../functions/webhook-state-worker.js');

    const echo = rowEvent('contact.changed', {
      context: 'CustEnv',
      primaryKey: 1,
      changedByAssociateId: 100,
    });
    const act = rowEvent('activity.deleted', { context: 'CustEnv', primaryKey: 2 });
    const errors = stateEvent('webhook.errors', { context: 'CustEnv', primaryKey: 3 });
    expect(await contact.handler(sqsEvent([sqsRecord(echo)]), lambdaContext)).toEqual({
      batchItemFailures: [],
    });
    expect(await activity.handler(sqsEvent([sqsRecord(act)]), lambdaContext)).toEqual({
      batchItemFailures: [],
    });
    expect(await state.handler(sqsEvent([sqsRecord(errors)]), lambdaContext)).toEqual({
      batchItemFailures: [],
    });

    expect((await db.store.listRowEvents('CustEnv', 'contact', 1))[0]).toMatchObject({ echo: true });
    expect(await db.store.getRow('CustEnv', 'activity', 2)).toMatchObject({ status: 'deleted' });
    expect(await gapsIn(db.store, 'CustEnv')).toHaveLength(1);
  });

  it('a missing table name stops the function at load, naming the variable', async () => {
    vi.stubEnv('ROWS_TABLE', '');
    vi.resetModules();
    await expect(import('../../functions/contact-worker.js')).rejects.toThrow('ROWS_TABLE must be set');
  });
});

describe('metrics', () => {
  it('are flushed without Powertools’ empty-buffer warning when invocations overlap (as under npm start)', async () => {
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'true');
    const warn = vi.fn();
    const metrics = new Metrics({
      namespace: 'CrmWebhookReceiver',
      logger: { warn, info: vi.fn(), debug: vi.fn(), error: vi.fn() },
    });
    const handler = createFifoBatchHandler(
      { handleRecord: async () => void metrics.addMetric('EventsApplied', MetricUnit.Count, 1) },
      { logger: quietObservability().logger, metrics },
    );
    const record = (primaryKey: number) =>
      sqsRecord(rowEvent('contact.created', { context: 'CustMetrics', primaryKey, timestamp: at(1) }));

    // The first to finish flushes the shared buffer, the other one's metric included.
    await Promise.all([
      handler(sqsEvent([record(1)]), lambdaContext),
      handler(sqsEvent([record(2)]), lambdaContext),
    ]);

    expect(warn).not.toHaveBeenCalled();
  });
});
