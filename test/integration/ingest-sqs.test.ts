import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleDelivery } from '../../lib/ingest/index.js';
import type { QueueKey } from '../../lib/queue/port.js';
import { createSqsSender } from '../../lib/queue/sqs.js';
import { policy, request, sample, withRawBody } from '../support/delivery.js';
import { type LocalSqs, startLocalSqs } from '../support/sqs.js';

describe('ingest against local-aws-sqs', () => {
  let sqs: LocalSqs;
  let queueUrls: Record<QueueKey, string>;

  beforeAll(async () => {
    sqs = await startLocalSqs();
    queueUrls = {
      contact: await sqs.createFifoQueue('contact'),
      activity: await sqs.createFifoQueue('activity'),
      webhookState: await sqs.createFifoQueue('webhook-state'),
      entities: await sqs.createFifoQueue('entities'),
      parked: await sqs.createFifoQueue('parked'),
    };
  });
  afterAll(async () => sqs.close());

  const receiveAll = async (queueUrl: string) => {
    const { Messages = [] } = await sqs.client.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        AttributeNames: ['All'],
        MessageAttributeNames: ['All'],
        WaitTimeSeconds: 0,
      }),
    );
    return Messages;
  };

  it('a delivery sent twice yields one message carrying the exact bytes, group and dedup ids', async () => {
    const queue = createSqsSender({ client: sqs.client, queueUrls });
    const body = sample('contact.created', { context: 'Cust9', primaryKey: 55 });
    const pretty = JSON.stringify(body, null, 1);
    const req = withRawBody(request(body), pretty);

    const first = await handleDelivery(req, policy(), queue);
    const second = await handleDelivery(req, policy(), queue);
    const messages = await receiveAll(queueUrls.contact);

    expect([first.status, second.status]).toEqual([200, 200]);
    expect(messages).toHaveLength(1);
    const [message] = messages;
    expect(message?.Body).toBe(pretty);
    expect(message?.Attributes?.MessageGroupId).toBe('Cust9:contact:55');
    expect(message?.Attributes?.MessageDeduplicationId).toBe(body.EventId);
    expect(message?.MessageAttributes?.eventId?.StringValue).toBe(body.EventId);
    expect(message?.MessageAttributes?.signatureVerified?.StringValue).toBe('true');
  });

  it('state events go to the webhook-state queue and unknown events to the parked queue with a reason', async () => {
    const queue = createSqsSender({ client: sqs.client, queueUrls });
    const state = sample('webhook.errors', { primaryKey: 9 });
    const unknown = { ...sample('contact.changed'), Event: 'invoice.created', Entity: 'invoice' };

    await handleDelivery(request(state), policy(), queue);
    await handleDelivery(
      request(unknown, { headers: { 'X-SuperOffice-Event': 'invoice.created' } }),
      policy(),
      queue,
    );
    const [stateMessage] = await receiveAll(queueUrls.webhookState);
    const [parked] = await receiveAll(queueUrls.parked);

    expect(stateMessage?.Attributes?.MessageGroupId).toBe('Cust12345:webhook:9');
    expect(parked?.MessageAttributes?.reason?.StringValue).toBe('unknown-event');
    expect(JSON.parse(parked?.Body ?? '{}').Event).toBe('invoice.created');
  });

  it('answers 503 when the queue is gone', async () => {
    const queue = createSqsSender({
      client: sqs.client,
      queueUrls: { ...queueUrls, contact: `${sqs.endpoint}/123456789012/missing.fifo` },
    });
    const response = await handleDelivery(request(sample('contact.changed')), policy(), queue);
    expect(response.status).toBe(503);
  });
});
