import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { parkedCopy } from '../ingest/replay.js';
import type { ReplayLock } from '../ingest/replay-lock.js';
import { sweepParked } from '../ingest/replay-parked.js';
import { QUEUE_KEYS, type QueueKey } from '../queue/port.js';
import { createSqsSender } from '../queue/sqs.js';
import { createSqsParkedSource } from '../queue/sqs-parked.js';
import type { ErasureQueue } from './request.js';

/**
 * A FIFO queue on SQS as an erasure sweeps it: received with every attribute, and every message it
 * keeps sent back to that same queue (the copy a replay makes, see lib/ingest/replay-parked.ts), so the
 * sweep spends none of its receives and no group stays blocked. `lock`: the parked queue's replay
 * lock, so an erasure and a replay never sweep it at once.
 */
export function sqsErasureQueue(
  client: SQSClient,
  queue: { name: string; url: string },
  lock?: ReplayLock,
): ErasureQueue {
  const back = Object.fromEntries(QUEUE_KEYS.map((key) => [key, queue.url])) as Record<QueueKey, string>;
  const options = {
    source: createSqsParkedSource({ client, queueUrl: queue.url }),
    sender: createSqsSender({ client, queueUrls: back }),
    lock,
  };
  return {
    name: queue.name,
    async sweep(carries) {
      let removed = 0;
      const { complete } = await sweepParked(options, (message) => {
        if (!carries(message.body)) return parkedCopy(message);
        removed++;
        return undefined;
      });
      return { removed, complete };
    },
  };
}

/** How long a standard queue's message stays hidden while a sweep goes on; the sweep stops at half. */
const HIDDEN_SECONDS = 300;

/**
 * A standard SQS queue (a subscription's DLQ: the events EventBridge could not deliver) as an erasure
 * sweeps it: each message received once and hidden, the ones `carries` names deleted, the others
 * made visible again at the end (a standard queue has no groups to block). Stops after half the time
 * a message stays hidden (`complete: false`): run it again.
 */
export function sqsStandardErasureQueue(
  client: SQSClient,
  queue: { name: string; url: string },
): ErasureQueue {
  return {
    name: queue.name,
    async sweep(carries) {
      const stopAt = Date.now() + (HIDDEN_SECONDS * 1000) / 2;
      const kept: string[] = [];
      let removed = 0;
      let complete = true;
      try {
        for (;;) {
          if (Date.now() >= stopAt) {
            complete = false;
            break;
          }
          const { Messages = [] } = await client.send(
            new ReceiveMessageCommand({
              QueueUrl: queue.url,
              MaxNumberOfMessages: 10,
              VisibilityTimeout: HIDDEN_SECONDS,
              WaitTimeSeconds: 0,
            }),
          );
          if (Messages.length === 0) break;
          for (const message of Messages) {
            const handle = message.ReceiptHandle ?? '';
            if (!carries(message.Body ?? '')) kept.push(handle);
            else {
              await client.send(new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: handle }));
              removed++;
            }
          }
        }
      } finally {
        await Promise.allSettled(
          kept.map((handle) =>
            client.send(
              new ChangeMessageVisibilityCommand({
                QueueUrl: queue.url,
                ReceiptHandle: handle,
                VisibilityTimeout: 0,
              }),
            ),
          ),
        );
      }
      return { removed, complete };
    },
  };
}
