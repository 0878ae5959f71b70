import { type DynamoDBDocumentClient, paginateScan, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditional, defaultClient, type Item } from './dynamo-calls.js';
import { InvalidItemError } from './errors.js';
import { parseRowKey, rowSetKey } from './keys.js';

/** What a backfill did so far: rows read, rows given the index keys, rows that had them already. */
export interface BackfillCounts {
  scanned: number;
  updated: number;
  alreadyIndexed: number;
}

export interface RowIndexBackfillConfig {
  client?: DynamoDBDocumentClient;
  table: string;
  /** Parallel Scan segments (default 4). */
  segments?: number;
  /** UpdateItem calls in flight per segment (default 8). */
  concurrency?: number;
  /** Called after each page of each segment with the totals so far. */
  onProgress?: (counts: Readonly<BackfillCounts>) => void;
}

/**
 * Gives the rows written before the `byRowSet` index existed its keys (`rowSet`, `rowPk`, derived from
 * `rowKey`), so a reconcile sees them and can find them deleted: without them a row the CRM has since
 * deleted is never rewritten, never indexed, and stays `active`. A parallel Scan reads only the keys of
 * the items without `rowSet`; each gets one UpdateItem conditioned on the row existing and still having
 * no `rowSet` (a worker that rewrote it meanwhile wrote both: counted as already indexed, not
 * overwritten). Idempotent: interrupted, it is run again; a second run updates nothing.
 *
 * @example
 * await backfillRowIndex({ table: 'crm-webhook-receiver-prod-rows', onProgress: console.log });
 * // { scanned: 120000, updated: 80000, alreadyIndexed: 40000 }
 */
export async function backfillRowIndex(config: RowIndexBackfillConfig): Promise<BackfillCounts> {
  const doc = config.client ?? defaultClient();
  const segments = config.segments ?? 4;
  const concurrency = config.concurrency ?? 8;
  const counts: BackfillCounts = { scanned: 0, updated: 0, alreadyIndexed: 0 };

  const index = async (item: Item) => {
    const key = String(item.rowKey);
    const parts = parseRowKey(key);
    if (parts === undefined) throw new InvalidItemError(config.table, key, ['rowKey']);
    const written = await conditional(() =>
      doc.send(
        new UpdateCommand({
          TableName: config.table,
          Key: { rowKey: key },
          UpdateExpression: 'SET rowSet = :s, rowPk = :pk',
          ConditionExpression: 'attribute_exists(rowKey) AND attribute_not_exists(rowSet)',
          ExpressionAttributeValues: {
            ':s': rowSetKey(parts.context, parts.entity),
            ':pk': parts.primaryKey,
          },
        }),
      ),
    );
    if (written) counts.updated++;
    else counts.alreadyIndexed++;
  };

  const segment = async (n: number) => {
    const pages = paginateScan(
      { client: doc },
      {
        TableName: config.table,
        Segment: n,
        TotalSegments: segments,
        ProjectionExpression: 'rowKey',
        FilterExpression: 'attribute_not_exists(rowSet)',
      },
    );
    for await (const page of pages) {
      const items = page.Items ?? [];
      const scanned = page.ScannedCount ?? items.length;
      counts.scanned += scanned;
      counts.alreadyIndexed += scanned - items.length;
      for (let i = 0; i < items.length; i += concurrency)
        await Promise.all(items.slice(i, i + concurrency).map(index));
      config.onProgress?.(counts);
    }
  };

  await Promise.all(Array.from({ length: segments }, (_, n) => segment(n)));
  return counts;
}
