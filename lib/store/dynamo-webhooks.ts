import {
  type DynamoDBDocumentClient,
  GetCommand,
  paginateQuery,
  paginateScan,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { Webhook } from '../model/types.js';
import { collect, conditional, defaultClient, defined, type Item, versionedPut } from './dynamo-calls.js';
import { acceptedSk, WEBHOOK_SK_PREFIX, webhookSk } from './keys.js';
import { parseItem } from './parse-item.js';
import type { Store } from './types.js';
import { AcceptedItemSchema, WebhookItemSchema } from './webhook-items.js';

export interface WebhookStoreConfig {
  client?: DynamoDBDocumentClient;
  table: string;
}

/** The part of the store that lives in the webhooks table (all the webhook-state worker needs). */
export type WebhookTableStore = Pick<
  Store,
  'listWebhooks' | 'markAccepted' | 'getLastAccepted' | 'loadWebhook' | 'saveWebhook'
>;

/** The webhooks-table half of {@link createDynamoStore}, on its own for the webhook-state worker. */
export function createWebhookStore(config: WebhookStoreConfig): WebhookTableStore {
  const doc = config.client ?? defaultClient();
  const table = config.table;

  const listAll = async (): Promise<Webhook[]> => {
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
    listWebhooks: (context) => (context === undefined ? listAll() : webhooksOf(context)),

    async markAccepted(context, webhookName, accepted) {
      await conditional(() =>
        doc.send(
          new UpdateCommand({
            TableName: table,
            Key: { context, sk: acceptedSk(webhookName) },
            UpdateExpression: `SET seq = :s, #t = :t, eventId = :e${accepted.receivedAt ? ', receivedAt = :r' : ''}`,
            ConditionExpression: 'attribute_not_exists(seq) OR seq < :s',
            ExpressionAttributeNames: { '#t': 'timestamp' },
            ExpressionAttributeValues: {
              ':s': accepted.seq,
              ':t': accepted.timestamp,
              ':e': accepted.eventId,
              ...(accepted.receivedAt && { ':r': accepted.receivedAt }),
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

function toWebhook(stored: Item, table: string): Webhook {
  const {
    sk: _sk,
    version: _version,
    ...webhook
  } = parseItem(WebhookItemSchema, stored, table, `${String(stored.context)}/${String(stored.sk)}`);
  return webhook;
}
