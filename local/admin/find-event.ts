import type { EventPlace, FoundEvent } from '../../dashboard/source.js';
import { toMessageView } from '../../dashboard/views.js';
import { findInStore, type StoreLookupDeps } from '../../lib/store/event-lookup.js';
import type { LocalQueue } from '../emulators/resources.js';
import type { StoredMessage } from '../emulators/sqs-message.js';

export interface FindEventDeps extends StoreLookupDeps {
  queues: readonly LocalQueue[];
  peek(queueName: string, limit?: number): StoredMessage[];
}

/**
 * The local lookup: the tables (by the index; by a scan when the events table was created before the
 * index, as dynalite cannot add one), then the messages of every queue, its DLQ and the parked queue,
 * read without receiving them.
 */
export async function findEvent(deps: FindEventDeps, eventId: string): Promise<FoundEvent> {
  const { places: inStore, by } = await findInStore(deps, eventId);
  const places: EventPlace[] = [...inStore];
  const searched =
    by === 'index'
      ? 'local: the events table by its EventId index, the webhooks table'
      : 'local: a scan of the events table (created before its EventId index), the webhooks table';
  for (const queue of deps.queues) {
    const where = queue.key === 'parked' ? 'parked' : 'queue';
    for (const [name, place] of [
      [queue.name, where],
      [queue.dlq.name, 'dlq'],
    ] as const) {
      for (const message of deps.peek(name)) {
        if (carries(message, eventId))
          places.push({ where: place, queue: queue.key, message: toMessageView(message) });
      }
    }
  }
  return { eventId, searched: `${searched}, every queue, its DLQ and the parked queue`, places };
}

function carries(message: StoredMessage, eventId: string): boolean {
  if (message.attributes.MessageDeduplicationId === eventId) return true;
  try {
    return (JSON.parse(message.body) as { EventId?: unknown }).EventId === eventId;
  } catch {
    return false;
  }
}
