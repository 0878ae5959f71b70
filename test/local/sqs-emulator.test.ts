import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { describe, expect, it, vi } from 'vitest';
import { loadDefinitions } from '../../infra/definitions.js';
import { ensureQueues } from '../../local/emulators/resources.js';
import { startSqsServer } from '../../local/emulators/sqs-server.js';
import { localQueuesForFile, startLocalQueues } from '../support/local-queues.js';

const local = localQueuesForFile({ stage: 'local', visibilityTimeout: 1 });

const queue = (key: string) => local.queues.find((candidate) => candidate.key === key)!;
const send = (url: string, body: string, group: string) =>
  local.client.send(
    new SendMessageCommand({
      QueueUrl: url,
      MessageBody: body,
      MessageGroupId: group,
      MessageDeduplicationId: body,
    }),
  );
const receive = async (url: string, max = 10, wait = 0) =>
  (
    await local.client.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: max,
        WaitTimeSeconds: wait,
        AttributeNames: ['All'],
      }),
    )
  ).Messages ?? [];

describe('the queues of infra/resources.yml on local-aws-sqs', () => {
  it('exist as FIFO queues with a redrive policy to their DLQ', async () => {
    expect(local.queues.map((q) => q.key)).toEqual([
      'contact',
      'activity',
      'webhookState',
      'entities',
      'parked',
      'reconcile',
    ]);
    const { Attributes } = await local.client.send(
      new GetQueueAttributesCommand({ QueueUrl: queue('contact').url, AttributeNames: ['All'] }),
    );
    expect(Attributes?.FifoQueue).toBe('true');
    expect(JSON.parse(Attributes?.RedrivePolicy ?? '{}')).toEqual({
      deadLetterTargetArn: queue('contact').dlq.arn,
      maxReceiveCount: 5,
    });
  });

  it('are created again without error (idempotent start)', async () => {
    const again = await ensureQueues(local.client, loadDefinitions({ stage: 'local' }).queues, {
      visibilityTimeout: 1,
    });
    expect(again.map((q) => q.url)).toEqual(local.queues.map((q) => q.url));
  });
});

describe('FIFO semantics patched into the emulator', () => {
  it('hands out no message of a group while one of it is in flight, and keeps group order', async () => {
    const url = queue('activity').url;
    for (const body of ['a1', 'a2', 'a3']) await send(url, body, 'A');
    await send(url, 'b1', 'B');

    const first = await receive(url, 2);
    expect(first.map((m) => m.Body)).toEqual(['a1', 'a2']);
    const second = await receive(url, 10);
    expect(second.map((m) => m.Body)).toEqual(['b1']);

    await local.client.send(
      new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: first[0]!.ReceiptHandle }),
    );
    await local.client.send(
      new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: second[0]!.ReceiptHandle }),
    );
    expect(await receive(url, 10)).toEqual([]); // a2 is still in flight, so a3 waits

    const redelivered = await receive(url, 10, 3); // a2's visibility timeout (1 s) ends
    expect(redelivered.map((m) => [m.Body, m.Attributes?.ApproximateReceiveCount])).toEqual([
      ['a2', '2'],
      ['a3', '1'],
    ]);
    for (const m of redelivered) {
      await local.client.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle }));
    }
  });

  it('answers a long poll as soon as a message arrives', async () => {
    const url = queue('activity').url;
    const started = Date.now();
    const pending = receive(url, 10, 5);
    setTimeout(() => void send(url, 'late', 'L'), 100);
    const messages = await pending;
    expect(messages.map((m) => m.Body)).toEqual(['late']);
    expect(Date.now() - started).toBeLessThan(1000);
    await local.client.send(
      new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: messages[0]!.ReceiptHandle }),
    );
  });

  it('counts only available messages as ApproximateNumberOfMessages', async () => {
    const url = queue('webhookState').url;
    await send(url, 'w1', 'W');
    await send(url, 'w2', 'X');
    const [taken] = await receive(url, 1);
    const { Attributes } = await local.client.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    expect(Attributes).toMatchObject({
      ApproximateNumberOfMessages: '1',
      ApproximateNumberOfMessagesNotVisible: '1',
    });
    expect(local.emulator.peek(queue('webhookState').name).map((m) => [m.body, m.inFlight])).toEqual([
      ['w1', true],
      ['w2', false],
    ]);
    await local.client.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: taken!.ReceiptHandle }));
    expect(local.emulator.peek(queue('webhookState').name).map((m) => m.body)).toEqual(['w2']);
  });

  it('moves a message to the DLQ after maxReceiveCount receives, and back with StartMessageMoveTask', async () => {
    const q = queue('parked');
    await send(q.url, 'poison', 'P');
    for (let attempt = 1; attempt <= 5; attempt++) {
      const [message] = await receive(q.url, 1, 3);
      expect(message?.Attributes?.ApproximateReceiveCount).toBe(String(attempt));
    }
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(local.emulator.peek(q.name)).toEqual([]);
    const [dead] = local.emulator.peek(q.dlq.name);
    expect(dead).toMatchObject({
      body: 'poison',
      attributes: { MessageGroupId: 'P', MessageDeduplicationId: 'poison' },
    });

    await local.client.send(new StartMessageMoveTaskCommand({ SourceArn: q.dlq.arn, DestinationArn: q.arn }));
    await expect
      .poll(
        async () =>
          (await local.client.send(new ListMessageMoveTasksCommand({ SourceArn: q.dlq.arn }))).Results?.[0]
            ?.Status,
        { timeout: 5000 },
      )
      .toBe('COMPLETED');
    expect(local.emulator.peek(q.dlq.name)).toEqual([]);
    expect(local.emulator.peek(q.name).map((m) => [m.body, m.attributes.MessageGroupId])).toEqual([
      ['poison', 'P'],
    ]);
  });

  it('counts receives only: making a message visible again spends none of its maxReceiveCount', async () => {
    const url = queue('activity').url;
    await send(url, 'released', 'R');
    for (let attempt = 1; attempt <= 4; attempt++) {
      const [message] = (await receive(url, 10)).filter((candidate) => candidate.Body === 'released');
      expect(message?.Attributes?.ApproximateReceiveCount).toBe(String(attempt));
      const release = { QueueUrl: url, ReceiptHandle: message!.ReceiptHandle, VisibilityTimeout: 0 };
      if (attempt < 4) await local.client.send(new ChangeMessageVisibilityCommand(release));
      else await local.client.send(new DeleteMessageCommand(release));
    }
  });
});

describe('deduplication patched into the emulator', () => {
  it('remembers a deduplication id for its interval (SQS: 5 minutes) after its message was deleted', async () => {
    // The emulator runs on its own thread, so its clock cannot be faked from here: a short interval
    // (the default, DEDUPLICATION_MS, is SQS's 5 minutes), long enough for the four calls before it ends.
    const interval = 2000;
    const local = await startLocalQueues({ stage: 'local', visibilityTimeout: 1, deduplicationMs: interval });
    try {
      const contact = local.queues.find((candidate) => candidate.key === 'contact')!;
      const sendOnce = () =>
        local.client.send(
          new SendMessageCommand({
            QueueUrl: contact.url,
            MessageBody: 'dedup-1',
            MessageGroupId: 'D',
            MessageDeduplicationId: 'dedup-1',
          }),
        );
      const receiveAll = async () =>
        (
          await local.client.send(
            new ReceiveMessageCommand({ QueueUrl: contact.url, MaxNumberOfMessages: 10 }),
          )
        ).Messages ?? [];
      const sentAt = Date.now();
      const first = await sendOnce();
      const [message] = await receiveAll();
      expect(message?.Body).toBe('dedup-1');
      await local.client.send(
        new DeleteMessageCommand({ QueueUrl: contact.url, ReceiptHandle: message!.ReceiptHandle }),
      );

      const repeat = await sendOnce();
      expect(repeat.MessageId).toBe(first.MessageId);
      expect(await receiveAll()).toEqual([]);
      expect(local.emulator.peek(contact.name)).toEqual([]);

      await new Promise((resolve) => setTimeout(resolve, interval - (Date.now() - sentAt) + 50));
      const later = await sendOnce();
      expect(later.MessageId).not.toBe(first.MessageId);
      const [again] = await receiveAll();
      expect(again?.Body).toBe('dedup-1');
    } finally {
      await local.close();
    }
  });
});

describe('availability patched into the emulator', () => {
  it('makes a new message, and one whose visibility is set to 0, available at once, as SQS does (not on a timer)', async () => {
    // The emulator's server on this thread, its timers stopped: only what happens at once counts.
    const server = await startSqsServer();
    const local = new SQSClient({
      endpoint: server.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    try {
      const { QueueUrl } = await local.send(
        new CreateQueueCommand({ QueueName: 'at-once.fifo', Attributes: { FifoQueue: 'true' } }),
      );
      vi.useFakeTimers({ toFake: ['setTimeout', 'setInterval'] });
      await local.send(
        new SendMessageCommand({
          QueueUrl,
          MessageBody: 'm',
          MessageGroupId: 'G',
          MessageDeduplicationId: 'm',
        }),
      );
      const first = await local.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 0 }));
      expect(first.Messages?.map((message) => message.Body)).toEqual(['m']);
      await local.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl,
          ReceiptHandle: first.Messages![0]!.ReceiptHandle,
          VisibilityTimeout: 0,
        }),
      );
      const again = await local.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 0 }));
      expect(again.Messages?.map((message) => message.Body)).toEqual(['m']);
    } finally {
      vi.useRealTimers();
      local.destroy();
      await server.close();
    }
  });
});
