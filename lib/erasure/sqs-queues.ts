import type { SQSClient } from '@aws-sdk/client-sqs';
import type { ReplayLock } from '../ingest/replay-lock.js';
import { QUEUE_KEYS, type QueueKey } from '../queue/port.js';
import { createSqsSender } from '../queue/sqs.js';
import { createSqsParkedSource } from '../queue/sqs-parked.js';
import type { ErasureQueue } from './request.js';

/**
 * A FIFO queue on SQS as an erasure sweeps it: received with every attribute, and every message it
 * keeps sent back to that same queue (the copy a replay makes), so the sweep spends none of its
 * receives. `lock`: the parked queue's replay lock, so an erasure and a replay never sweep it at once.
 */
export function sqsErasureQueue(
  client: SQSClient,
  queue: { name: string; url: string },
  lock?: ReplayLock,
): ErasureQueue {
  const back = Object.fromEntries(QUEUE_KEYS.map((key) => [key, queue.url])) as Record<QueueKey, string>;
  return {
    name: queue.name,
    source: createSqsParkedSource({ client, queueUrl: queue.url }),
    sender: createSqsSender({ client, queueUrls: back }),
    lock,
  };
}
