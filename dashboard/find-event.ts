import { type DynamoDBDocumentClient, paginateQuery } from '@aws-sdk/lib-dynamodb';
import { EVENT_ID_INDEX } from '../infra/definitions.js';
import type { EventRecord, RowEntity, StateTransition } from '../lib/model/types.js';
import type { StoreReader } from '../lib/store/types.js';
import type { MessageView } from './views.js';

/** What a lookup in the tables needs. */
export interface StoreLookupDeps {
  store: StoreReader;
  doc: DynamoDBDocumentClient;
  eventsTable: string;
}

/** A place an event was found, with what that place holds of it. */
export type EventPlace =
  | { where: 'row'; context: string; entity: RowEntity; primaryKey: number; record: EventRecord }
  | { where: 'webhook'; context: string; webhookId: number; transition: StateTransition }
  | { where: 'queue' | 'dlq' | 'parked'; queue: string; message: MessageView };

export interface FoundEvent {
  eventId: string;
  /** How the places were searched, shown on the page. */
  searched: string;
  places: EventPlace[];
}

/**
 * Where an EventId went in the tables: the row histories that hold it (the events table's
 * {@link EVENT_ID_INDEX} gives their keys, then each row's history) and the webhooks' state changes.
 */
export async function findInStore(
  deps: StoreLookupDeps,
  eventId: string,
  rowKeys: (deps: StoreLookupDeps, eventId: string) => Promise<Set<string>> = indexedRowKeys,
): Promise<EventPlace[]> {
  const [keys, webhooks] = await Promise.all([rowKeys(deps, eventId), deps.store.listWebhooks()]);
  const places: EventPlace[] = [];
  for (const key of keys) {
    // rowKey is `<entity>#<primaryKey>#<context>` (lib/store/keys.ts): the context may hold a `#`.
    const [entity, primaryKey, ...context] = key.split('#');
    const row = { context: context.join('#'), entity: entity as RowEntity, primaryKey: Number(primaryKey) };
    const history = await deps.store.listRowEvents(row.context, row.entity, row.primaryKey);
    for (const record of history)
      if (record.eventId === eventId) places.push({ where: 'row', ...row, record });
  }
  for (const webhook of webhooks) {
    for (const transition of webhook.transitions ?? []) {
      if (transition.eventId === eventId)
        places.push({ where: 'webhook', context: webhook.context, webhookId: webhook.webhookId, transition });
    }
  }
  return places;
}

async function indexedRowKeys(deps: StoreLookupDeps, eventId: string): Promise<Set<string>> {
  const keys = new Set<string>();
  const pages = paginateQuery(
    { client: deps.doc },
    {
      TableName: deps.eventsTable,
      IndexName: EVENT_ID_INDEX,
      KeyConditionExpression: 'eventId = :id',
      ExpressionAttributeValues: { ':id': eventId },
    },
  );
  for await (const page of pages) for (const item of page.Items ?? []) keys.add(String(item.rowKey));
  return keys;
}
