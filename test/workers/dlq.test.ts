import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
} from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDefinitions, redriveAllowPolicy, redrivePolicy } from '../../infra/definitions.js';
import { handleDelivery } from '../../lib/ingest/index.js';
import { createSqsSender } from '../../lib/queue/sqs.js';
import type { Store } from '../../lib/store/types.js';
import { createRowWorker, type SqsBatchHandler } from '../../lib/workers/index.js';
import { toSqsRecord } from '../../local/lambda/event-source-mapping.js';
import { policy, request, sample } from '../support/delivery.js';
import { type LocalDynamo, startDynamoStore } from '../support/dynamo.js';
import { type LocalSqs, startLocalSqs } from '../support/sqs.js';
import { at, lambdaContext, rowWorkerDeps } from '../support/workers.js';

let sqs: LocalSqs;
let dynamo: LocalDynamo;
let store: Store;
let queueUrl: string;
let dlqUrl: string;
let maxReceiveCount: number;

/** The contact queue and its DLQ exactly as infra/resources.yml defines them, wired by redrive policy. */
beforeAll(async () => {
  [sqs, { dynamo, store }] = await Promise.all([startLocalSqs(), startDynamoStore()]);
  const contact = loadDefinitions({ stage: 'dlqtest' }).queues.find((queue) => queue.key === 'contact')!;
  maxReceiveCount = contact.dlq.maxReceiveCount;
  dlqUrl = (
    await sqs.client.send(
      new CreateQueueCommand({ QueueName: contact.dlq.name, Attributes: contact.dlq.attributes }),
    )
  ).QueueUrl!;
  const dlqArn = await queueArn(dlqUrl);
  queueUrl = (
    await sqs.client.send(
      new CreateQueueCommand({
        QueueName: contact.name,
        Attributes: { ...contact.attributes, RedrivePolicy: redrivePolicy(dlqArn, maxReceiveCount) },
      }),
    )
  ).QueueUrl!;
  await sqs.client.send(
    new SetQueueAttributesCommand({
      QueueUrl: dlqUrl,
      Attributes: { RedriveAllowPolicy: redriveAllowPolicy(await queueArn(queueUrl)) },
    }),
  );
});
afterAll(async () => {
  await Promise.all([sqs?.close(), dynamo?.close()]);
});

async function queueArn(url: string): Promise<string> {
  const { Attributes } = await sqs.client.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
  );
  return Attributes!.QueueArn!;
}

async function receive(url: string): Promise<Message[]> {
  const { Messages = [] } = await sqs.client.send(
    new ReceiveMessageCommand({
      QueueUrl: url,
      MaxNumberOfMessages: 10,
      AttributeNames: ['All'],
      MessageAttributeNames: ['All'],
      WaitTimeSeconds: 0,
    }),
  );
  return Messages;
}

/** What the Lambda SQS event source hands the function (the local runtime's own conversion). */
const toRecord = (message: Message): SQSRecord =>
  toSqsRecord(message, 'arn:aws:sqs:us-east-1:123456789012:contact.fifo', 'us-east-1');

/** The event source mapping in miniature: receive → invoke → delete the successes, release the failures. */
async function drain(handler: SqsBatchHandler): Promise<{ invocations: number; failures: number }> {
  let invocations = 0;
  let failures = 0;
  for (;;) {
    const messages = await receive(queueUrl);
    if (messages.length === 0) return { invocations, failures };
    invocations++;
    const { batchItemFailures } = await handler({ Records: messages.map(toRecord) }, lambdaContext);
    const failed = new Set(batchItemFailures.map((failure) => failure.itemIdentifier));
    failures += failed.size;
    for (const message of messages) {
      const ReceiptHandle = message.ReceiptHandle!;
      if (failed.has(message.MessageId!)) {
        await sqs.client.send(
          new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle, VisibilityTimeout: 0 }),
        );
      } else {
        await sqs.client.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle }));
      }
    }
    if (invocations > 50) throw new Error('the queue never drained');
  }
}

describe('poison record', () => {
  it('ends in the DLQ through the redrive policy; nothing else of its batch is lost', async () => {
    // Valid per the spec, but its row key exceeds DynamoDB's 2048-byte partition key limit: the store
    // rejects it every time. The ingest parks such a delivery (lib/ingest/store-fit.ts), so it is queued here
    // directly, standing for any record the store keeps refusing.
    const poisonContext = `Cust${'x'.repeat(2100)}`;
    const poison = sample('contact.changed', {
      context: poisonContext,
      primaryKey: 1,
      timestamp: at(1, Date.now()),
    });
    const others = [1, 2, 3, 4].map((primaryKey) =>
      sample('contact.created', { context: 'CustDlq', primaryKey, timestamp: at(primaryKey, Date.now()) }),
    );
    const queue = createSqsSender({
      client: sqs.client,
      queueUrls: { contact: queueUrl, activity: '', webhookState: '', entities: '', parked: '' },
    });
    expect((await handleDelivery(request(others[0]!), policy(), queue)).status).toBe(200);
    await sqs.client.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: JSON.stringify(poison),
        MessageGroupId: 'poison',
        MessageDeduplicationId: String(poison.EventId),
      }),
    );
    for (const body of others.slice(1)) {
      expect((await handleDelivery(request(body), policy(), queue)).status).toBe(200);
    }

    const worker = createRowWorker({
      entity: 'contact',
      ...rowWorkerDeps(store),
    });
    const { failures } = await drain(worker);

    // Only the poison ever failed, once per receive until the redrive policy moved it. (local-aws-sqs
    // counts the ChangeMessageVisibility(0) release as a receive too, so this takes fewer rounds than
    // maxReceiveCount; SQS would take exactly maxReceiveCount.)
    expect(failures).toBeGreaterThanOrEqual(1);
    expect(failures).toBeLessThanOrEqual(maxReceiveCount);
    const dead = await receive(dlqUrl);
    expect(dead).toHaveLength(1);
    expect(JSON.parse(dead[0]!.Body!).EventId).toBe(poison.EventId);
    expect(await receive(queueUrl)).toEqual([]);
    for (const body of others) {
      expect(await store.getRow('CustDlq', 'contact', body.PrimaryKey as number)).toMatchObject({
        lastEventId: body.EventId,
        eventCount: 1,
      });
    }
  });
});
