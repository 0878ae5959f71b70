import { type DynamoDBDocumentClient, paginateQuery, paginateScan } from '@aws-sdk/lib-dynamodb';
import type { EventRecord, RowEntity, StateTransition } from '../model/types.js';
import { EVENT_ID_INDEX } from './keys.js';
import type { StoreReader } from './types.js';

/** What a lookup in the tables needs. */
export interface StoreLookupDeps {
  store: StoreReader;
  doc: DynamoDBDocumentClient;
  eventsTable: string;
}

/** A place in the tables an event was found, with what that place holds of it. */
export type StorePlace =
  | { where: 'row'; context: string; entity: RowEntity; primaryKey: number; record: EventRecord }
  | { where: 'webhook'; context: string; webhookId: number; transition: StateTransition };

/** How the rows that hold an EventId were found: by the EventId index, or by a scan where there is none. */
export type RowSearch = 'index' | 'scan';

/** What {@link findInStore} found, and how it searched the history. */
export interface StorePlaces {
  places: StorePlace[];
  by: RowSearch;
}

/** Segments of the parallel scan of the events table when it has no EventId index. */
export const SCAN_SEGMENTS = 8;

/**
 * Where an EventId went in the tables: the row histories that hold it and the webhooks' state changes.
 * The rows come from the events table's {@link EVENT_ID_INDEX} where the stage has it (the
 * `eventIdIndex` stage param; the local runtime always), else from a parallel scan of the table
 * (about 0.5 read unit per 4 KB stored, seconds per million events kept: an operator's lookup).
 */
export async function findInStore(deps: StoreLookupDeps, eventId: string): Promise<StorePlaces> {
  const [{ keys, by }, webhooks] = await Promise.all([rowKeys(deps, eventId), deps.store.listWebhooks()]);
  const places: StorePlace[] = [];
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
  return { places, by };
}

/** The keys of the rows whose history holds `eventId`: by the index, or by a scan when the table has none. */
async function rowKeys(
  deps: StoreLookupDeps,
  eventId: string,
): Promise<{ keys: Set<string>; by: RowSearch }> {
  try {
    return { keys: await indexedRowKeys(deps, eventId), by: 'index' };
  } catch (error) {
    // DynamoDB (and dynalite) answer a Query on a missing index with a ValidationException.
    if (!(error instanceof Error) || error.name !== 'ValidationException') throw error;
    return { keys: await scannedRowKeys(deps, eventId), by: 'scan' };
  }
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

async function scannedRowKeys(deps: StoreLookupDeps, eventId: string): Promise<Set<string>> {
  const keys = new Set<string>();
  const segment = async (Segment: number) => {
    const pages = paginateScan(
      { client: deps.doc },
      {
        TableName: deps.eventsTable,
        Segment,
        TotalSegments: SCAN_SEGMENTS,
        ProjectionExpression: 'rowKey',
        FilterExpression: 'eventId = :id',
        ExpressionAttributeValues: { ':id': eventId },
      },
    );
    for await (const page of pages) for (const item of page.Items ?? []) keys.add(String(item.rowKey));
  };
  await Promise.all(Array.from({ length: SCAN_SEGMENTS }, (_, i) => segment(i)));
  return keys;
}
