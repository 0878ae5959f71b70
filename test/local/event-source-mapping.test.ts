import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { LocalQueue } from '../../local/emulators/resources.js';
import {
  type EventSourceMappingOptions,
  startEventSourceMapping,
} from '../../local/lambda/event-source-mapping.js';
import { localQueuesForFile } from '../support/local-queues.js';

const local = localQueuesForFile({ stage: 'local', visibilityTimeout: 1 });

async function sendAll(queue: LocalQueue, messages: Array<{ body: string; group: string }>) {
  for (let i = 0; i < messages.length; i += 10) {
    await local.client.send(
      new SendMessageBatchCommand({
        QueueUrl: queue.url,
        Entries: messages.slice(i, i + 10).map((m, j) => ({
          Id: String(j),
          MessageBody: m.body,
          MessageGroupId: m.group,
          MessageDeduplicationId: m.body,
          MessageAttributes: { event: { DataType: 'String', StringValue: 'contact.changed' } },
        })),
      }),
    );
  }
}

/** The mapping of `queue` as the runtime starts it, polling with a 1 s long poll. */
const startMapping = (
  queue: LocalQueue,
  options: Pick<EventSourceMappingOptions, 'functionName' | 'handler' | 'concurrency' | 'onError'>,
) =>
  startEventSourceMapping({
    client: local.client,
    queueUrl: queue.url,
    queueArn: queue.arn,
    region: 'us-east-1',
    waitTimeSeconds: 1,
    ...options,
  });

describe('startEventSourceMapping', () => {
  it('invokes the handler with Lambda-shaped SQS records in batches of up to 10 and deletes them', async () => {
    const queue = local.queues.find((q) => q.key === 'contact')!;
    const batches: SQSEvent[] = [];
    await sendAll(
      queue,
      Array.from({ length: 25 }, (_, i) => ({ body: `m${i}`, group: `g${i % 3}` })),
    );
    const mapping = startMapping(queue, {
      functionName: 'contactWorker',
      handler: async (event) => {
        batches.push(event);
        return { batchItemFailures: [] };
      },
    });
    await expect.poll(() => mapping.stats.succeeded, { timeout: 5000 }).toBe(25);
    await mapping.stop();

    expect(batches.every((batch) => batch.Records.length <= 10)).toBe(true);
    const bodies = batches.flatMap((batch) => batch.Records.map((record) => record.body));
    for (const group of [0, 1, 2]) {
      const inGroup = bodies.filter((body) => Number(body.slice(1)) % 3 === group);
      expect(inGroup).toEqual([...inGroup].sort((a, b) => Number(a.slice(1)) - Number(b.slice(1))));
    }
    const record = batches[0]!.Records[0]!;
    expect(record).toMatchObject({
      messageId: expect.any(String),
      receiptHandle: expect.any(String),
      body: 'm0',
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: expect.stringMatching(/^\d+$/),
        SenderId: expect.any(String),
        ApproximateFirstReceiveTimestamp: expect.stringMatching(/^\d+$/),
        SequenceNumber: expect.any(String),
        MessageGroupId: 'g0',
        MessageDeduplicationId: 'm0',
      },
      messageAttributes: {
        event: {
          stringValue: 'contact.changed',
          stringListValues: [],
          binaryListValues: [],
          dataType: 'String',
        },
      },
      md5OfBody: expect.any(String),
      md5OfMessageAttributes: expect.any(String),
      eventSource: 'aws:sqs',
      eventSourceARN: queue.arn,
      awsRegion: 'us-east-1',
    });
    expect(local.emulator.peek(queue.name)).toEqual([]);
  });

  it('leaves reported failures to the visibility timeout and redelivers them before later messages of the group', async () => {
    const queue = local.queues.find((q) => q.key === 'activity')!;
    await sendAll(queue, [
      { body: 'x1', group: 'X' },
      { body: 'x2', group: 'X' },
      { body: 'y1', group: 'Y' },
    ]);
    const seen: string[] = [];
    const mapping = startMapping(queue, {
      functionName: 'activityWorker',
      handler: async (event): Promise<SQSBatchResponse> => {
        const failures: string[] = [];
        for (const record of event.Records) {
          seen.push(`${record.body}#${record.attributes.ApproximateReceiveCount}`);
          // Group X fails on its first delivery (x1 and, as the workers do, the rest of its group).
          if (record.attributes.MessageGroupId === 'X' && record.attributes.ApproximateReceiveCount === '1') {
            failures.push(record.messageId);
          }
        }
        return { batchItemFailures: failures.map((itemIdentifier) => ({ itemIdentifier })) };
      },
    });
    await expect.poll(() => mapping.stats.succeeded, { timeout: 6000 }).toBe(3);
    await mapping.stop();
    expect(seen.filter((s) => s.startsWith('x'))).toEqual(['x1#1', 'x2#1', 'x1#2', 'x2#2']);
    expect(seen).toContain('y1#1');
  });

  it('fails the whole batch when the handler throws', async () => {
    const queue = local.queues.find((q) => q.key === 'webhookState')!;
    await sendAll(queue, [{ body: 'w1', group: 'W' }]);
    let calls = 0;
    const mapping = startMapping(queue, {
      functionName: 'webhookStateWorker',
      handler: async () => {
        calls++;
        if (calls === 1) throw new Error('boom');
        return { batchItemFailures: [] };
      },
      onError: () => undefined,
    });
    await expect.poll(() => mapping.stats.succeeded, { timeout: 6000 }).toBe(1);
    await mapping.stop();
    expect(mapping.stats).toMatchObject({ batches: 2, failed: 1, succeeded: 1 });
  });
  it('with invocations in flight at once, never hands two of them messages of one group, and keeps each group in order', async () => {
    const queue = local.queues.find((q) => q.key === 'entities')!;
    const GROUPS = 40;
    const PER_GROUP = 15;
    const holder = new Map<string, number>();
    const applied = new Map<string, number[]>();
    const overlaps: string[] = [];
    let invocations = 0;
    const mapping = startMapping(queue, {
      functionName: 'entitiesWorker',
      concurrency: 5,
      handler: async (event): Promise<SQSBatchResponse> => {
        const invocation = ++invocations;
        const failed = new Set<string>();
        const failures: string[] = [];
        for (const record of event.Records) {
          const group = record.attributes.MessageGroupId!;
          const other = holder.get(group);
          if (other !== undefined && other !== invocation)
            overlaps.push(`${group}: ${other} and ${invocation}`);
          holder.set(group, invocation);
          // A row write takes a moment, during which the other invocations run.
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 2));
          const index = Number(record.body.split('/')[1]);
          // Every seventh message fails on its first delivery, and the rest of its group in the batch
          // with it (as the workers do), so redeliveries race with the other invocations too.
          if (failed.has(group) || (index % 7 === 3 && record.attributes.ApproximateReceiveCount === '1')) {
            failed.add(group);
            failures.push(record.messageId);
            continue;
          }
          applied.set(group, [...(applied.get(group) ?? []), index]);
        }
        for (const record of event.Records) {
          if (holder.get(record.attributes.MessageGroupId!) === invocation)
            holder.delete(record.attributes.MessageGroupId!);
        }
        return { batchItemFailures: failures.map((itemIdentifier) => ({ itemIdentifier })) };
      },
    });
    // Sent while the mapping polls, the groups interleaved, each group in order.
    await sendAll(
      queue,
      Array.from({ length: GROUPS * PER_GROUP }, (_, i) => ({
        body: `g${i % GROUPS}/${Math.floor(i / GROUPS)}`,
        group: `g${i % GROUPS}`,
      })),
    );
    await expect.poll(() => mapping.stats.succeeded, { timeout: 15_000 }).toBe(GROUPS * PER_GROUP);
    await mapping.stop();
    expect(overlaps).toEqual([]);
    const inOrder = Array.from({ length: PER_GROUP }, (_, i) => i);
    for (let g = 0; g < GROUPS; g++) expect(applied.get(`g${g}`), `group g${g}`).toEqual(inOrder);
    expect(mapping.stats.failed).toBeGreaterThan(0);
  });
});
