import { paginateScan } from '@aws-sdk/lib-dynamodb';
import { type FoundEvent, findInStore, type StoreLookupDeps } from '../dashboard/find-event.js';
import { toMessageView } from '../dashboard/views.js';
import type { LocalQueue } from './resources.js';
import type { StoredMessage } from './sqs-message.js';

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
  let searched = 'local: the events table by its EventId index, the webhooks table';
  const places = await findInStore(deps, eventId).catch((error: unknown) => {
    if (!(error instanceof Error) || error.name !== 'ValidationException') throw error;
    searched = 'local: a scan of the events table (created before its EventId index), the webhooks table';
    return findInStore(deps, eventId, scannedRowKeys);
  });
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

async function scannedRowKeys(deps: StoreLookupDeps, eventId: string): Promise<Set<string>> {
  const keys = new Set<string>();
  const pages = paginateScan(
    { client: deps.doc },
    {
      TableName: deps.eventsTable,
      ProjectionExpression: 'rowKey, seq',
      FilterExpression: 'contains(seq, :id)',
      ExpressionAttributeValues: { ':id': `#${eventId}` },
    },
  );
  for await (const page of pages) {
    for (const item of page.Items ?? []) {
      if (String(item.seq).endsWith(`#${eventId}`)) keys.add(String(item.rowKey));
    }
  }
  return keys;
}

function carries(message: StoredMessage, eventId: string): boolean {
  if (message.attributes.MessageDeduplicationId === eventId) return true;
  try {
    return (JSON.parse(message.body) as { EventId?: unknown }).EventId === eventId;
  } catch {
    return false;
  }
}
