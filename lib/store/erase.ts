import {
  type DynamoDBDocumentClient,
  paginateQuery,
  paginateScan,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { erasedBody } from '../erasure/row.js';
import type { RowEntity } from '../model/types.js';
import { contentHash } from '../recognition.js';
import { compressBody, decompressBody } from './body-codec.js';
import { collect, conditional } from './dynamo-calls.js';
import { EventItemSchema, RowEntitySchema } from './items.js';
import { parseRowKey } from './keys.js';
import { parseItem } from './parse-item.js';

/**
 * Erases the personal data of every history record under one row key: each record not erased yet
 * gets the {@link erasedBody} of its body, `erased: true` and the content hash of the body it had
 * (what tells a redelivery from a resend once the body is gone), and loses `changed` (field names).
 * One conditional update per record (on the record still being there: a record the TTL removed
 * meanwhile is not written back). Idempotent: a second run finds nothing to erase. Returns how many
 * records it erased.
 */
export async function eraseHistory(doc: DynamoDBDocumentClient, table: string, key: string): Promise<number> {
  const items = await collect(
    paginateQuery(
      { client: doc },
      {
        TableName: table,
        KeyConditionExpression: 'rowKey = :k',
        ExpressionAttributeValues: { ':k': key },
        ConsistentRead: true,
      },
    ),
  );
  let erased = 0;
  for (const stored of items) {
    const item = parseItem(EventItemSchema, stored, table, `${key}/${String(stored.seq)}`);
    if (item.erased === true) continue;
    const body = decompressBody(item.body);
    const written = await conditional(() =>
      doc.send(
        new UpdateCommand({
          TableName: table,
          Key: { rowKey: key, seq: item.seq },
          UpdateExpression: 'SET #b = :b, erased = :t, contentHash = :h REMOVE changed',
          ConditionExpression: 'attribute_exists(rowKey)',
          ExpressionAttributeNames: { '#b': 'body' },
          ExpressionAttributeValues: {
            ':b': compressBody(erasedBody(body)),
            ':t': true,
            ':h': item.contentHash ?? contentHash(body, JSON.parse(body).EventId),
          },
        }),
      ),
    );
    if (written) erased++;
  }
  return erased;
}

/**
 * The keys of every row of `context`: a scan of the rows table (keys only), filtered to the context's
 * row keys. A scan reads the whole table: for erasing a tenant (offboarding), not for a request path.
 */
export async function tenantRowKeys(
  doc: DynamoDBDocumentClient,
  table: string,
  context: string,
): Promise<Array<{ entity: RowEntity; primaryKey: number }>> {
  const items = await collect(
    paginateScan(
      { client: doc },
      {
        TableName: table,
        ProjectionExpression: 'rowKey',
        FilterExpression: 'contains(rowKey, :c)',
        ExpressionAttributeValues: { ':c': `#${context}` },
      },
    ),
  );
  return items.flatMap((item) => {
    const parts = parseRowKey(String(item.rowKey));
    if (parts === undefined || parts.context !== context) return [];
    const entity = parseItem(RowEntitySchema, parts.entity, table, String(item.rowKey));
    return [{ entity, primaryKey: parts.primaryKey }];
  });
}
