import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { type ReconcileQueue, ReconcileRequestSchema } from '../../lib/reconcile/request.js';
import { createStateWorker } from '../../lib/workers/index.js';
import { FakePublisher } from '../support/bus.js';
import { dynamoStoreForFile } from '../support/dynamo.js';
import { localSqsForFile, reconcileQueueOn } from '../support/sqs.js';
import {
  at,
  contactWorker,
  lambdaContext,
  quietObservability,
  redelivered,
  rowEvent,
  sqsEvent,
  sqsRecord,
  stateEvent,
} from '../support/workers.js';

const db = dynamoStoreForFile();
const sqs = localSqsForFile();

/** Every request waiting in the reconcile queue (received and left invisible: each test has its own queue). */
async function queued(queueUrl: string) {
  const requests: unknown[] = [];
  for (;;) {
    const { Messages = [] } = await sqs.client.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 300 }),
    );
    if (Messages.length === 0) return requests;
    requests.push(...Messages.map((message) => JSON.parse(message.Body!)));
  }
}

function worker(reconcile: ReconcileQueue | undefined, bus = new FakePublisher()) {
  const handler = createStateWorker({
    store: db.store,
    hooks: {},
    reconcile,
    publication: { publisher: bus, publishEchoes: false, isBookkeeping: () => false },
    ...quietObservability(),
  });
  return { bus, handler };
}

const lifecycle = (bus: FakePublisher) =>
  bus.published
    .filter((entry) => entry.DetailType.startsWith('receiver.'))
    .map((entry) => ({ type: entry.DetailType, ...JSON.parse(entry.Detail) }));

describe('the gap triggers of the webhook-state worker (dynalite, local SQS FIFO)', () => {
  it('a gap opened and closed enqueues one reconcile each from openedAt less a minute, announced on the bus', async () => {
    const context = 'CustTrig';
    const queueUrl = await sqs.createFifoQueue('reconcile-trig');
    const { bus, handler } = worker(reconcileQueueOn(sqs, queueUrl));
    const lastRow = rowEvent('contact.changed', { context, primaryKey: 5, timestamp: at(10) });
    await contactWorker(db.store)(sqsEvent([sqsRecord(lastRow)]), lambdaContext);

    const errors = sqsRecord(stateEvent('webhook.errors', { context, primaryKey: 7, timestamp: at(20) }));
    expect((await handler(sqsEvent([errors]), lambdaContext)).batchItemFailures).toEqual([]);
    // The same record again after a crash past the write, and the same event in a second message.
    await handler(sqsEvent([redelivered(errors)]), lambdaContext);
    await handler(sqsEvent([{ ...errors, messageId: 'another' }]), lambdaContext);
    const started = stateEvent('webhook.started', { context, primaryKey: 7, timestamp: at(90) });
    await handler(sqsEvent([sqsRecord(started)]), lambdaContext);

    const from = new Date(Date.parse(lastRow.Timestamp) - 60_000).toISOString();
    const requests = await queued(queueUrl);
    expect(requests).toEqual([
      {
        context,
        reason: 'gap-opened',
        from,
        webhookId: 7,
        requestedAt: new Date(Date.parse(at(20))).toISOString(),
      },
      {
        context,
        reason: 'gap-closed',
        from,
        webhookId: 7,
        requestedAt: new Date(Date.parse(at(90))).toISOString(),
      },
    ]);
    for (const request of requests) expect(ReconcileRequestSchema.safeParse(request).success).toBe(true);
    const gap = { context, webhookId: 7, webhookName: 'crm-webhook-receiver', openedAt: lastRow.Timestamp };
    // Published once per merge and again on the redelivery (at least once), never for a duplicate message.
    expect(lifecycle(bus)).toEqual([
      { type: 'receiver.gap.opened', ...gap },
      { type: 'receiver.gap.opened', ...gap },
      { type: 'receiver.gap.closed', ...gap, closedAt: started.Timestamp },
    ]);
  });

  it('a queue that refuses fails the record; its redelivery enqueues what the first attempt could not', async () => {
    const context = 'CustTrigDown';
    const queueUrl = await sqs.createFifoQueue('reconcile-down');
    let down = true;
    const real = reconcileQueueOn(sqs, queueUrl);
    const { handler } = worker({
      enqueue: (request) => (down ? Promise.reject(new Error('SQS unavailable')) : real.enqueue(request)),
    });
    const stopped = sqsRecord(stateEvent('webhook.stopped', { context, primaryKey: 3, timestamp: at(5) }));
    const failed = await handler(sqsEvent([stopped]), lambdaContext);
    expect(failed.batchItemFailures).toEqual([{ itemIdentifier: stopped.messageId }]);
    down = false;
    expect((await handler(sqsEvent([redelivered(stopped)]), lambdaContext)).batchItemFailures).toEqual([]);
    expect(await queued(queueUrl)).toEqual([
      expect.objectContaining({ context, reason: 'gap-opened', webhookId: 3 }),
    ]);
  });

  it('without a reconcile queue (no CRM_API_URL) nothing is enqueued; the gap is still announced', async () => {
    const context = 'CustTrigOff';
    const { bus, handler } = worker(undefined);
    const stopped = stateEvent('webhook.stopped', { context, primaryKey: 4, timestamp: at(5) });
    expect((await handler(sqsEvent([sqsRecord(stopped)]), lambdaContext)).batchItemFailures).toEqual([]);
    expect(lifecycle(bus)).toEqual([expect.objectContaining({ type: 'receiver.gap.opened', context })]);
  });
});
