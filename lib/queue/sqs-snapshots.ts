import {
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { type BatchLimits, batches } from '../batches.js';
import { type OutboundMessage, type QueueKey, QueueUnavailableError } from './port.js';
import { sqsAttributes } from './sqs.js';
import { encodeSqsMessage, messageBytes, SQS_MAX_MESSAGE_BYTES } from './sqs-message.js';

/** SQS takes at most 10 messages per SendMessageBatch, and at most its message limit in all. */
const SEND_BATCH: BatchLimits<Entry> = {
  count: 10,
  bytes: SQS_MAX_MESSAGE_BYTES,
  size: (entry) => entry.bytes,
};
/** Entries an SQS batch refused (throttled, internal error) are sent again this many times. */
const ATTEMPTS = 3;

/** Sends a reconcile's snapshots; resolves only when every one is on its queue. */
export type SnapshotSender = (messages: readonly OutboundMessage[]) => Promise<void>;

/**
 * Sends snapshot messages ({@link snapshotMessage}) to their rows' FIFO queues with SendMessageBatch:
 * ten to a call (a page of 200 rows is 20 calls, not 200), encoded as the ingest encodes its messages.
 * Entries SQS refused are sent again; any still refused after {@link ATTEMPTS} fail the whole call
 * with a QueueUnavailableError (the reconcile then sends the page again: same EventIds, same
 * deduplication ids, one event each).
 */
export function createSnapshotSender(config: {
  client: SQSClient;
  queueUrls: Readonly<Partial<Record<QueueKey, string>>>;
}): SnapshotSender {
  return async (messages) => {
    for (const [queue, entries] of byQueue(messages)) {
      const url = config.queueUrls[queue];
      if (url === undefined)
        throw new QueueUnavailableError(`no URL for the ${queue} queue: set its environment variable`, queue);
      for (const batch of batches(entries, SEND_BATCH)) await sendBatch(config.client, url, queue, batch);
    }
  };
}

async function sendBatch(client: SQSClient, url: string, queue: QueueKey, batch: Entry[]): Promise<void> {
  let pending = batch.map(({ entry }) => entry);
  for (let attempt = 1; pending.length > 0; attempt++) {
    let failed: string[];
    try {
      const answer = await client.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: pending }));
      failed = (answer.Failed ?? []).map((entry) => `${entry.Id}: ${entry.Code ?? 'failed'}`);
      const ids = new Set((answer.Failed ?? []).map((entry) => entry.Id));
      pending = pending.filter((entry) => ids.has(entry.Id));
    } catch (error) {
      failed = [error instanceof Error ? error.name : 'UnknownError'];
    }
    if (pending.length > 0 && attempt >= ATTEMPTS)
      throw new QueueUnavailableError(
        `SendMessageBatch to the ${queue} queue failed for ${pending.length} snapshots: ${failed[0]}`,
        queue,
      );
  }
}

type Entry = { entry: SendMessageBatchRequestEntry; bytes: number };

function byQueue(messages: readonly OutboundMessage[]): Map<QueueKey, Entry[]> {
  const queues = new Map<QueueKey, Entry[]>();
  for (const message of messages) {
    const encoded = encodeSqsMessage(message);
    const entries = queues.get(message.queue) ?? [];
    entries.push({
      entry: {
        Id: String(entries.length),
        MessageBody: encoded.body,
        MessageGroupId: encoded.groupId,
        MessageDeduplicationId: encoded.deduplicationId,
        MessageAttributes: sqsAttributes(encoded),
      },
      bytes: messageBytes(encoded),
    });
    queues.set(message.queue, entries);
  }
  return queues;
}
