import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueueUnavailableError } from '../../lib/queue/port.js';
import { moveBack } from '../../lib/queue/sqs-move-back.js';
import { createSqsReconcileQueue } from '../../lib/queue/sqs-reconcile.js';
import type { ReconcileRequest } from '../../lib/reconcile/request.js';
import type { LocalQueue } from '../../local/emulators/resources.js';
import { type LocalQueues, startLocalQueues } from '../support/local-queues.js';

let local: LocalQueues;
let reconcile: LocalQueue;

beforeAll(async () => {
  local = await startLocalQueues({ stage: 'reconcileq' });
  reconcile = local.queues.find((queue) => queue.key === 'reconcile')!;
});
afterAll(async () => {
  await local?.close();
});

async function receive(url: string): Promise<Message[]> {
  const { Messages = [] } = await local.client.send(
    new ReceiveMessageCommand({
      QueueUrl: url,
      MaxNumberOfMessages: 10,
      AttributeNames: ['All'],
      WaitTimeSeconds: 0,
    }),
  );
  return Messages;
}

const request = (context: string, overrides: Partial<ReconcileRequest> = {}): ReconcileRequest => ({
  context,
  reason: 'manual',
  from: '2026-11-27T10:00:00Z',
  requestedAt: '2026-11-27T12:00:00Z',
  ...overrides,
});

describe('the reconcile queue (infra/resources.yml, as npm start creates it)', () => {
  it('is FIFO, under RECONCILE_QUEUE_URL, redriven to its own DLQ after 5 receives, which only it may use', async () => {
    expect(reconcile).toMatchObject({
      name: 'crm-webhook-receiver-reconcileq-reconcile.fifo',
      envVar: 'RECONCILE_QUEUE_URL',
      dlq: { name: 'crm-webhook-receiver-reconcileq-reconcile-dlq.fifo', maxReceiveCount: 5 },
    });
    const { Attributes } = await local.client.send(
      new GetQueueAttributesCommand({ QueueUrl: reconcile.url, AttributeNames: ['All'] }),
    );
    expect(Attributes?.FifoQueue).toBe('true');
    expect(JSON.parse(Attributes!.RedrivePolicy!)).toEqual({
      deadLetterTargetArn: reconcile.dlq.arn,
      maxReceiveCount: 5,
    });
    const dlq = await local.client.send(
      new GetQueueAttributesCommand({ QueueUrl: reconcile.dlq.url, AttributeNames: ['All'] }),
    );
    expect(JSON.parse(dlq.Attributes!.RedriveAllowPolicy!)).toEqual({
      redrivePermission: 'byQueue',
      sourceQueueArns: [reconcile.arn],
    });
  });
});

describe('createSqsReconcileQueue', () => {
  it('sends one message per request, grouped by context; the same request twice is one message', async () => {
    const queue = createSqsReconcileQueue({ client: local.client, queueUrl: reconcile.url });
    await queue.enqueue(request('Cust1'));
    await queue.enqueue(request('Cust1'));
    await queue.enqueue(request('Cust2', { entities: ['contact'], full: true, from: undefined }));
    // FIFO: a receive may stop at a group's edge; read until the queue answers nothing.
    const messages: Message[] = [];
    for (let batch = await receive(reconcile.url); batch.length > 0; batch = await receive(reconcile.url))
      messages.push(...batch);
    expect(messages).toHaveLength(2);
    const byContext = new Map(messages.map((message) => [message.Attributes?.MessageGroupId, message]));
    expect(JSON.parse(byContext.get('Cust1')!.Body!)).toEqual(request('Cust1'));
    expect(JSON.parse(byContext.get('Cust2')!.Body!)).toEqual({
      context: 'Cust2',
      reason: 'manual',
      requestedAt: '2026-11-27T12:00:00Z',
      entities: ['contact'],
      full: true,
    });
    for (const message of messages)
      await local.client.send(
        new DeleteMessageCommand({ QueueUrl: reconcile.url, ReceiptHandle: message.ReceiptHandle! }),
      );
  });

  it('a request that fails 5 times waits in the DLQ, and a redrive puts it back on the queue', async () => {
    const queue = createSqsReconcileQueue({ client: local.client, queueUrl: reconcile.url });
    await queue.enqueue(request('Cust3'));
    // Every receive without a delete is a failed attempt; the 6th receive finds it dead-lettered.
    for (let attempt = 0; attempt < 6; attempt++) {
      for (const message of await receive(reconcile.url))
        await local.client.send(
          new ChangeMessageVisibilityCommand({
            QueueUrl: reconcile.url,
            ReceiptHandle: message.ReceiptHandle!,
            VisibilityTimeout: 0,
          }),
        );
    }
    const dead = await receive(reconcile.dlq.url);
    expect(dead.map((message) => JSON.parse(message.Body!).context)).toEqual(['Cust3']);
    for (const message of dead)
      await local.client.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: reconcile.dlq.url,
          ReceiptHandle: message.ReceiptHandle!,
          VisibilityTimeout: 0,
        }),
      );
    const moved = await moveBack(
      local.client,
      { queue: 'reconcile', sourceArn: reconcile.dlq.arn, destinationArn: reconcile.arn },
      10_000,
    );
    expect(moved).toMatchObject({ queue: 'reconcile', status: 'COMPLETED', moved: 1 });
    expect((await receive(reconcile.url)).map((message) => JSON.parse(message.Body!).context)).toEqual([
      'Cust3',
    ]);
  });

  it('a refused SendMessage is a QueueUnavailableError naming the reconcile queue, not the request', async () => {
    const client = new SQSClient({ region: 'us-east-1' });
    const mock = mockClient(client);
    mock
      .on(SendMessageCommand)
      .rejects(Object.assign(new Error('Access denied'), { name: 'AccessDeniedException' }));
    const queue = createSqsReconcileQueue({ client, queueUrl: reconcile.url });
    const error = await queue.enqueue(request('Cust4')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(QueueUnavailableError);
    expect(error).toMatchObject({
      queue: 'reconcile',
      message: 'SendMessage to the reconcile queue failed: AccessDeniedException',
    });
    mock.restore();
  });

  it('refuses a request the contract does not accept before sending anything', async () => {
    const client = new SQSClient({ region: 'us-east-1' });
    const mock = mockClient(client);
    const queue = createSqsReconcileQueue({ client, queueUrl: reconcile.url });
    await expect(queue.enqueue(request('not a context!'))).rejects.toThrow();
    expect(mock.commandCalls(SendMessageCommand)).toHaveLength(0);
    mock.restore();
  });
});
