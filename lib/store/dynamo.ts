import { type DynamoDBDocumentClient, GetCommand, PutCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import { erasedBody } from '../erasure/row.js';
import type { EventRecord } from '../model/types.js';
import { contentHash } from '../recognition.js';
import { compressBody, decompressBody } from './body-codec.js';
import { collect, conditional, defaultClient, type Item, versionedPut } from './dynamo-calls.js';
import { createWebhookStore } from './dynamo-webhooks.js';
import { eraseHistory, tenantRowKeys } from './erase.js';
import { EventBodySchema, EventItemSchema, RowEntitySchema } from './items.js';
import { rowKey } from './keys.js';
import { parseItem } from './parse-item.js';
import { listRecoveries } from './recovery-list.js';
import { fromRowItem, toRowItem } from './row-item.js';
import type { Store } from './types.js';

export interface DynamoStoreConfig {
  /** Defaults to a client built from the SDK's environment (AWS_ENDPOINT_URL_DYNAMODB included). */
  client?: DynamoDBDocumentClient;
  tables: { rows: string; events: string; webhooks: string };
  /** Days a history record lives before the TTL removes it. */
  retentionDays: number;
  now?: () => Date;
}

/**
 * The DynamoDB adapter: rows (`rowKey`), events (`rowKey` + `seq`, TTL `expiresAt`) and webhooks
 * (`context` + `sk`: `webhook#<id>` items, `accepted#<WebhookName>` markers, `recovery#<id>`). Every write is a
 * single conditional item write; a failed condition becomes a domain outcome here (`false`, or a
 * {@link VersionConflictError}), never an SDK error upstairs.
 *
 * @example
 * const store = createDynamoStore({ tables: { rows: 'r', events: 'e', webhooks: 'w' }, retentionDays: 30 });
 * await store.getRow('Cust12345', 'contact', 42);
 */
export function createDynamoStore(config: DynamoStoreConfig): Store {
  const doc = config.client ?? defaultClient();
  const { rows, events } = config.tables;
  const now = config.now ?? (() => new Date());
  const retentionSeconds = config.retentionDays * 86_400;

  const loadRow: Store['loadRow'] = async (context, entity, primaryKey) => {
    const { Item } = await doc.send(
      new GetCommand({
        TableName: rows,
        Key: { rowKey: rowKey(context, entity, primaryKey) },
        ConsistentRead: true,
      }),
    );
    if (Item === undefined) return { item: undefined, version: 0 };
    return { item: fromRowItem(Item, rows), version: Number(Item.version) };
  };

  return {
    ...createWebhookStore({ client: doc, table: config.tables.webhooks }),
    listRecoveries: (context) => listRecoveries(doc, config.tables.webhooks, context),

    loadRow,

    async getRow(context, entity, primaryKey) {
      return (await loadRow(context, entity, primaryKey)).item;
    },

    async saveRow(row, expectedVersion) {
      const item = toRowItem(row, expectedVersion + 1);
      await versionedPut(doc, rows, item, 'rowKey', String(item.rowKey), expectedVersion);
    },

    async recordEvent(record) {
      const recordedAt = now();
      const body = record.body ?? JSON.stringify(record.payload);
      // Only what the body does not already say: the body itself holds the event's id, name, Timestamp
      // and associate, the key holds the row.
      const item: Item = {
        rowKey: rowKey(record.context, record.entity, record.primaryKey),
        seq: record.seq,
        // Key of the events table's EventId index (infra/resources.yml): where did this event go.
        eventId: record.eventId,
        body: compressBody(record.erased ? erasedBody(body) : body),
        echo: record.echo,
        ...(record.conflictOf !== undefined && { conflictOf: record.conflictOf }),
        ...(record.resendOf !== undefined && { resendOf: record.resendOf }),
        ...(record.unpublished === true && { unpublished: true }),
        ...(record.changed !== undefined && !record.erased && { changed: record.changed }),
        ...(record.erased && {
          erased: true,
          contentHash: record.contentHash ?? contentHash(body, record.eventId),
        }),
        ...(record.signatureVerified !== undefined && { signatureVerified: record.signatureVerified }),
        ...(record.receivedAt !== undefined && { receivedAt: record.receivedAt }),
        recordedAt: recordedAt.toISOString(),
        expiresAt: Math.floor(recordedAt.getTime() / 1000) + retentionSeconds,
      };
      return conditional(() =>
        doc.send(
          new PutCommand({
            TableName: events,
            Item: item,
            ConditionExpression: 'attribute_not_exists(rowKey)',
          }),
        ),
      );
    },

    eraseRowHistory: (context, entity, primaryKey) =>
      eraseHistory(doc, events, rowKey(context, entity, primaryKey)),
    tenantRows: (context) => tenantRowKeys(doc, rows, context),

    async getRowEvent(context, entity, primaryKey, seq) {
      const { Item } = await doc.send(
        new GetCommand({
          TableName: events,
          Key: { rowKey: rowKey(context, entity, primaryKey), seq },
          ConsistentRead: true,
        }),
      );
      return Item === undefined ? undefined : toEventRecord(Item, events);
    },

    async listRowEvents(context, entity, primaryKey) {
      const items = await collect(
        paginateQuery(
          { client: doc },
          {
            TableName: events,
            KeyConditionExpression: 'rowKey = :k',
            ExpressionAttributeValues: { ':k': rowKey(context, entity, primaryKey) },
            ConsistentRead: true,
          },
        ),
      );
      return items.map((item) => toEventRecord(item, events));
    },
  };
}

/** A history record from its item: the body holds the event's own fields, the item the rest. */
function toEventRecord(stored: Item, table: string): EventRecord {
  const item = parseItem(EventItemSchema, stored, table, `${String(stored.rowKey)}/${String(stored.seq)}`);
  const body = decompressBody(item.body);
  const payload = parseItem(EventBodySchema, JSON.parse(body), table, `${item.rowKey}/${item.seq}`);
  const [entity, primaryKey] = item.rowKey.split('#');
  return {
    context: payload.ContextIdentifier,
    entity: entity === 'webhook' ? entity : parseItem(RowEntitySchema, entity, table, item.rowKey),
    primaryKey: Number(primaryKey),
    seq: item.seq,
    eventId: payload.EventId,
    eventName: payload.Event,
    timestamp: payload.Timestamp,
    changedByAssociateId: payload.ChangedByAssociateId,
    echo: item.echo,
    ...(item.conflictOf !== undefined && { conflictOf: item.conflictOf }),
    ...(item.resendOf !== undefined && { resendOf: item.resendOf }),
    ...(item.unpublished === true && { unpublished: true }),
    ...(item.changed !== undefined && { changed: item.changed }),
    ...(item.erased === true && { erased: true }),
    ...(item.contentHash !== undefined && { contentHash: item.contentHash }),
    ...(item.signatureVerified !== undefined && { signatureVerified: item.signatureVerified }),
    ...(item.receivedAt !== undefined && { receivedAt: item.receivedAt }),
    recordedAt: item.recordedAt,
    expiresAt: item.expiresAt,
    payload,
    body,
  };
}
