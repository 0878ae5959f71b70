import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { expect, it } from 'vitest';
import type { ReconcileRequest } from '../../lib/reconcile/request.js';
import { reconcileMessage } from '../../lib/reconcile/request.js';
import { localSqsForFile, reconcileQueueOn } from '../support/sqs.js';

const sqs = localSqsForFile();

const request: ReconcileRequest = {
  context: 'Cust1',
  reason: 'manual',
  from: '2026-11-27T10:00:00.000Z',
  requestedAt: '2026-11-27T10:05:00.000Z',
};

it('sends the request signed over SQS’s JSON protocol, in the context’s group, deduplicated by its hash', async () => {
  const queueUrl = await sqs.createFifoQueue('reconcile-json');
  const queue = reconcileQueueOn(sqs, queueUrl);
  await queue.enqueue(request);
  await queue.enqueue(request);
  const { Messages = [] } = await sqs.client.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: 10,
      AttributeNames: ['All'],
    }),
  );
  const { deduplicationId } = reconcileMessage(request);
  expect(Messages.map((m) => [JSON.parse(m.Body!), m.Attributes])).toMatchObject([
    [request, { MessageGroupId: 'Cust1', MessageDeduplicationId: deduplicationId }],
  ]);
});

it('a queue that refuses is one line naming the answer', async () => {
  const queue = reconcileQueueOn(sqs, `${sqs.endpoint}/000000000000/missing.fifo`);
  await expect(queue.enqueue(request)).rejects.toThrow(/^SendMessage to the reconcile queue failed: \S+$/);
});
