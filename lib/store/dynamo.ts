import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  paginateQuery,
  paginateScan,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { gapsOf } from '../webhook-state.js';
import { compressBody, decompressBody } from './body-codec.js';
import { VersionConflictError } from './errors.js';
import {
  AcceptedItemSchema,
  EventBodySchema,
  EventItemSchema,
  parseItem,
  RowEntitySchema,
  WebhookItemSchema,
} from './items.js';
import { acceptedSk, rowKey, WEBHOOK_SK_PREFIX, webhookSk } from './keys.js';
import { fromRowItem, toRowItem } from './row-item.js';
import type { EventRecord, Store, Webhook } from './types.js';

export interface DynamoStoreConfig {
  /** Defaults to a client built from the SDK's environment (AWS_ENDPOINT_URL_DYNAMODB included). */
  client?: DynamoDBDocumentClient;
  tables: { rows: string; events: string; webhooks: string };
  /** Days a history record lives before the TTL removes it. */
  retentionDays: number;
  now?: () => Date;
}

export interface WebhookStoreConfig {
  client?: DynamoDBDocumentClient;
  table: string;
}

/** The part of the store that lives in the webhooks table (all the webhook-state worker needs). */
export type WebhookTableStore = Pick<
  Store,
  'listWebhooks' | 'listGaps' | 'markAccepted' | 'getLastAccepted' | 'loadWebhook' | 'saveWebhook'
>;

type Item = Record<string, unknown>;

/**
 * The DynamoDB adapter: rows (`rowKey`), events (`rowKey` + `seq`, TTL `expiresAt`) and webhooks
 * (`context` + `sk`: `webhook#<id>` items and `accepted#<WebhookName>` markers). Every write is a
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
      // Only what the body does not already say: the body itself holds the event's id, name, Timestamp
      // and associate, the key holds the row.
      const item: Item = {
        rowKey: rowKey(record.context, record.entity, record.primaryKey),
        seq: record.seq,
        // Key of the events table's EventId index (infra/resources.yml): where did this event go.
        eventId: record.eventId,
        body: compressBody(record.body ?? JSON.stringify(record.payload)),
        echo: record.echo,
        ...(record.conflictOf !== undefined && { conflictOf: record.conflictOf }),
        ...(record.resendOf !== undefined && { resendOf: record.resendOf }),
        ...(record.unpublished === true && { unpublished: true }),
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

    async markPublished(context, entity, primaryKey, seq) {
      await conditional(() =>
        doc.send(
          new UpdateCommand({
            TableName: events,
            Key: { rowKey: rowKey(context, entity, primaryKey), seq },
            UpdateExpression: 'REMOVE unpublished',
            ConditionExpression: 'attribute_exists(rowKey)',
          }),
        ),
      );
    },

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

/** The webhooks-table half of {@link createDynamoStore}, on its own for the webhook-state worker. */
export function createWebhookStore(config: WebhookStoreConfig): WebhookTableStore {
  const doc = config.client ?? defaultClient();
  const table = config.table;

  const listWebhooks = async (): Promise<Webhook[]> => {
    const items = await collect(
      paginateScan(
        { client: doc },
        {
          TableName: table,
          FilterExpression: 'begins_with(sk, :p)',
          ExpressionAttributeValues: { ':p': WEBHOOK_SK_PREFIX },
          ConsistentRead: true,
        },
      ),
    );
    return items
      .map((item) => toWebhook(item, table))
      .sort((a, b) => (a.context < b.context ? -1 : a.context > b.context ? 1 : a.webhookId - b.webhookId));
  };

  const webhooksOf = async (context: string): Promise<Webhook[]> => {
    const items = await collect(
      paginateQuery(
        { client: doc },
        {
          TableName: table,
          KeyConditionExpression: '#c = :c AND begins_with(sk, :p)',
          ExpressionAttributeNames: { '#c': 'context' },
          ExpressionAttributeValues: { ':c': context, ':p': WEBHOOK_SK_PREFIX },
          ConsistentRead: true,
        },
      ),
    );
    return items.map((item) => toWebhook(item, table)).sort((a, b) => a.webhookId - b.webhookId);
  };

  return {
    listWebhooks,

    async listGaps(context) {
      const list = context === undefined ? await listWebhooks() : await webhooksOf(context);
      return list.flatMap(gapsOf);
    },

    async markAccepted(context, webhookName, accepted) {
      await conditional(() =>
        doc.send(
          new UpdateCommand({
            TableName: table,
            Key: { context, sk: acceptedSk(webhookName) },
            UpdateExpression: 'SET seq = :s, #t = :t, eventId = :e',
            ConditionExpression: 'attribute_not_exists(seq) OR seq < :s',
            ExpressionAttributeNames: { '#t': 'timestamp' },
            ExpressionAttributeValues: {
              ':s': accepted.seq,
              ':t': accepted.timestamp,
              ':e': accepted.eventId,
            },
          }),
        ),
      );
    },

    async getLastAccepted(context, webhookName) {
      const { Item } = await doc.send(
        new GetCommand({
          TableName: table,
          Key: { context, sk: acceptedSk(webhookName) },
          ConsistentRead: true,
        }),
      );
      if (Item === undefined) return undefined;
      const { seq, timestamp, eventId } = parseItem(AcceptedItemSchema, Item, table, `${context}/accepted`);
      return { seq, timestamp, eventId };
    },

    async loadWebhook(context, webhookId) {
      const { Item } = await doc.send(
        new GetCommand({
          TableName: table,
          Key: { context, sk: webhookSk(webhookId) },
          ConsistentRead: true,
        }),
      );
      if (Item === undefined) return { item: undefined, version: 0 };
      return { item: toWebhook(Item, table), version: Number(Item.version) };
    },

    async saveWebhook(webhook, expectedVersion) {
      const sk = webhookSk(webhook.webhookId);
      const item = { ...defined(webhook), sk, version: expectedVersion + 1 };
      await versionedPut(doc, table, item, 'sk', `${webhook.context}/${sk}`, expectedVersion);
    },
  };
}

function defaultClient(): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(new DynamoDBClient({}), {
    marshallOptions: { removeUndefinedValues: true },
  });
}

/** Put that succeeds only on the version it was computed from (or on no item, for version 0). */
async function versionedPut(
  doc: DynamoDBDocumentClient,
  table: string,
  item: Item,
  keyAttribute: string,
  key: string,
  expectedVersion: number,
): Promise<void> {
  const condition =
    expectedVersion === 0
      ? { ConditionExpression: `attribute_not_exists(${keyAttribute})` }
      : {
          ConditionExpression: '#v = :v',
          ExpressionAttributeNames: { '#v': 'version' },
          ExpressionAttributeValues: { ':v': expectedVersion },
        };
  const written = await conditional(() =>
    doc.send(new PutCommand({ TableName: table, Item: item, ...condition })),
  );
  if (!written) throw new VersionConflictError(table, key);
}

/** Runs a conditional write: `true` when written, `false` when its condition failed. */
async function conditional(write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

async function collect(pages: AsyncIterable<{ Items?: Item[] }>): Promise<Item[]> {
  const items: Item[] = [];
  for await (const page of pages) items.push(...(page.Items ?? []));
  return items;
}

/** Top-level `undefined` values dropped (a caller's client may not be set to remove them). */
function defined(value: object): Item {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}

function toWebhook(stored: Item, table: string): Webhook {
  const {
    sk: _sk,
    version: _version,
    ...webhook
  } = parseItem(WebhookItemSchema, stored, table, `${String(stored.context)}/${String(stored.sk)}`);
  return webhook;
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
    ...(item.signatureVerified !== undefined && { signatureVerified: item.signatureVerified }),
    ...(item.receivedAt !== undefined && { receivedAt: item.receivedAt }),
    recordedAt: item.recordedAt,
    expiresAt: item.expiresAt,
    payload,
    body,
  };
}
