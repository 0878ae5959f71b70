import { handleDelivery } from '../../lib/ingest/index.js';
import type { DeliveryPolicy } from '../../lib/ingest/request.js';
import type { QueueKey } from '../../lib/queue/port.js';
import { createSqsSender } from '../../lib/queue/sqs.js';
import { createSqsParkedSource } from '../../lib/queue/sqs-parked.js';
import type { StoredMessage } from '../../local/emulators/sqs-message.js';
import { policy, request } from './delivery.js';
import { type LocalQueues, startLocalQueues } from './local-queues.js';

/** A parked delivery as the emulator holds it, with its attributes flattened to their string values. */
export type PeekedMessage = StoredMessage & { values: Record<string, string | undefined> };

/** The SQS emulator with the runtime's queues, and what a replay test does with them. */
export interface ParkedQueues {
  local: LocalQueues;
  queueUrls: Record<QueueKey, string>;
  /** A queue's messages (or its DLQ's), read without receiving them. */
  peek(key: QueueKey, options?: { dlq?: boolean }): PeekedMessage[];
  /** Sends each body through the ingest with ENTITIES=contact: the rest is parked. Returns their EventIds. */
  park(bodies: Record<string, unknown>[]): Promise<string[]>;
  source(): ReturnType<typeof createSqsParkedSource>;
  sender(): ReturnType<typeof createSqsSender>;
}

export async function startParkedQueues(): Promise<ParkedQueues> {
  const local = await startLocalQueues();
  const { queueUrls } = local;
  const sender = () => createSqsSender({ client: local.client, queueUrls });
  return {
    local,
    queueUrls,
    peek(key, options = {}) {
      const queue = local.queues.find((candidate) => candidate.key === key)!;
      return local.emulator.peek(options.dlq ? queue.dlq.name : queue.name).map((message) => ({
        ...message,
        values: Object.fromEntries(
          Object.entries(message.messageAttributes).map(([name, value]) => [name, value.StringValue]),
        ),
      }));
    },
    async park(bodies) {
      const onlyContacts: DeliveryPolicy = policy({ entities: (entity) => entity === 'contact' });
      for (const body of bodies) {
        const answer = await handleDelivery(request(body), onlyContacts, sender());
        if (answer.decision.kind !== 'park') throw new Error(`${String(body.Event)} was not parked`);
      }
      return bodies.map((body) => String(body.EventId));
    },
    source: () => createSqsParkedSource({ client: local.client, queueUrl: queueUrls.parked }),
    sender,
  };
}
