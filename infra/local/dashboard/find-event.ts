import { type DynamoDBDocumentClient, paginateScan } from '@aws-sdk/lib-dynamodb';
import type { EventRecord, RowEntity, StateTransition, StoreReader } from '../../../lib/store/types.js';
import { type MessageView, toMessageView } from '../admin-api.js';
import type { LocalQueue } from '../resources.js';
import type { StoredMessage } from '../sqs-emulator.js';

export interface FindEventDeps {
  store: StoreReader;
  doc: DynamoDBDocumentClient;
  eventsTable: string;
  queues: readonly LocalQueue[];
  peek(queueName: string, limit?: number): StoredMessage[];
}

/** A place an event was found, with what that place holds of it. */
export type EventPlace =
  | { where: 'row'; context: string; entity: RowEntity; primaryKey: number; record: EventRecord }
  | { where: 'webhook'; context: string; webhookId: number; transition: StateTransition }
  | { where: 'queue' | 'dlq' | 'parked'; queue: string; message: MessageView };

export interface FoundEvent {
  eventId: string;
  /** How the places were searched: locally, scans (fine at this scale; AWS would need an index). */
  searched: string;
  places: EventPlace[];
}

/**
 * Where an EventId went: its row's history (a scan of the events table for the order key's
 * `#<EventId>` suffix, then the row's history), a webhook's state transitions, and the messages of
 * every queue, its DLQ and the parked queue (read without receiving them).
 */
export async function findEvent(deps: FindEventDeps, eventId: string): Promise<FoundEvent> {
  const [rows, webhooks] = await Promise.all([rowPlaces(deps, eventId), deps.store.listWebhooks()]);
  const places: EventPlace[] = [...rows];
  for (const webhook of webhooks) {
    for (const transition of webhook.transitions ?? []) {
      if (transition.eventId === eventId)
        places.push({ where: 'webhook', context: webhook.context, webhookId: webhook.webhookId, transition });
    }
  }
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
  return {
    eventId,
    searched: 'local scan: events table, webhooks table, every queue, its DLQ and the parked queue',
    places,
  };
}

async function rowPlaces(deps: FindEventDeps, eventId: string): Promise<EventPlace[]> {
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
  const places: EventPlace[] = [];
  for (const key of keys) {
    // rowKey is `<entity>#<primaryKey>#<context>` (lib/store/keys.ts): the context may hold a `#`.
    const [entity, primaryKey, ...context] = key.split('#');
    const row = { context: context.join('#'), entity: entity as RowEntity, primaryKey: Number(primaryKey) };
    const history = await deps.store.listRowEvents(row.context, row.entity, row.primaryKey);
    for (const record of history)
      if (record.eventId === eventId) places.push({ where: 'row', ...row, record });
  }
  return places;
}

function carries(message: StoredMessage, eventId: string): boolean {
  if (message.attributes.MessageDeduplicationId === eventId) return true;
  try {
    return (JSON.parse(message.body) as { EventId?: unknown }).EventId === eventId;
  } catch {
    return false;
  }
}
