import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { type MessageAttributeValue, SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { LocalQueue } from './resources.js';
import type { StoredMessage } from './sqs-emulator.js';

/**
 * SQS lives in memory; DynamoDB lives on disk. So that a restart loses nothing that was accepted, the
 * messages still queued at shutdown (worker queues, parked, dead-letter queues) are written to
 * `DATA_DIR/sqs-snapshot.json` and sent back, in order and with their group, deduplication id and
 * attributes, on the next start. Receive counts start again from zero.
 */
export interface QueueSnapshot {
  version: 1;
  queues: Record<string, SnapshotMessage[]>;
}

interface SnapshotMessage {
  body: string;
  groupId?: string;
  deduplicationId?: string;
  attributes: Record<string, MessageAttributeValue>;
}

export async function saveSnapshot(
  path: string,
  queues: readonly LocalQueue[],
  peek: (queueName: string) => StoredMessage[],
): Promise<number> {
  const snapshot: QueueSnapshot = { version: 1, queues: {} };
  let count = 0;
  for (const queue of queues) {
    for (const name of [queue.name, queue.dlq.name]) {
      const messages = peek(name).map(
        (message): SnapshotMessage => ({
          body: message.body,
          groupId: message.attributes.MessageGroupId,
          deduplicationId: message.attributes.MessageDeduplicationId,
          attributes: Object.fromEntries(
            Object.entries(message.messageAttributes).map(([key, value]) => [key, { ...value }]),
          ) as Record<string, MessageAttributeValue>,
        }),
      );
      if (messages.length > 0) snapshot.queues[name] = messages;
      count += messages.length;
    }
  }
  if (count === 0) {
    await rm(path, { force: true });
    return 0;
  }
  await writeFile(`${path}.tmp`, JSON.stringify(snapshot));
  await rename(`${path}.tmp`, path);
  return count;
}

/** Sends a snapshot's messages back to their queues and removes the file; returns how many. */
export async function restoreSnapshot(
  path: string,
  client: SQSClient,
  queues: readonly LocalQueue[],
): Promise<number> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return 0;
  }
  const snapshot = JSON.parse(text) as QueueSnapshot;
  const urls = new Map<string, string>();
  for (const queue of queues) {
    urls.set(queue.name, queue.url);
    urls.set(queue.dlq.name, queue.dlq.url);
  }
  let count = 0;
  for (const [name, messages] of Object.entries(snapshot.queues)) {
    const QueueUrl = urls.get(name);
    if (!QueueUrl) continue;
    for (let i = 0; i < messages.length; i += 10) {
      const Entries = messages.slice(i, i + 10).map((message, j) => ({
        Id: String(j),
        MessageBody: message.body,
        MessageGroupId: message.groupId,
        MessageDeduplicationId: message.deduplicationId,
        MessageAttributes: Object.keys(message.attributes).length > 0 ? message.attributes : undefined,
      }));
      const answer = await client.send(new SendMessageBatchCommand({ QueueUrl, Entries }));
      if (answer.Failed && answer.Failed.length > 0) {
        throw new Error(
          `Restoring ${name} from ${path} failed: ${answer.Failed[0]?.Message ?? 'unknown error'}`,
        );
      }
      count += Entries.length;
    }
  }
  await rm(path, { force: true });
  return count;
}
