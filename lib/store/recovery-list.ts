import { type DynamoDBDocumentClient, paginateQuery, paginateScan } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { collect } from './dynamo-calls.js';
import { parseItem } from './parse-item.js';
import { RECOVERY_SK_PREFIX, type WebhookRecovery } from './recovery.js';
import { ReconcileOutcomeSchema } from './recovery-schema.js';

/** A recovery item as written by lib/store/recovery.ts (its key and order numbers are the adapter's). */
const RecoveryItemSchema = z.object({
  context: z.string(),
  webhookId: z.number(),
  reconcile: z.optional(ReconcileOutcomeSchema),
  reactivatedAt: z.optional(z.string()),
}) satisfies z.ZodMiniType<WebhookRecovery>;

/**
 * The recovery items (lib/store/recovery.ts) of a context's webhooks (a query of its partition), or of
 * every context (a scan): what `GET /gaps` adds to each gap. A file of its own, so the functions that
 * only write them do not bundle the reads.
 */
export async function listRecoveries(
  doc: DynamoDBDocumentClient,
  table: string,
  context?: string,
): Promise<WebhookRecovery[]> {
  const prefix = { ':p': RECOVERY_SK_PREFIX };
  const items = await collect(
    context === undefined
      ? paginateScan(
          { client: doc },
          {
            TableName: table,
            FilterExpression: 'begins_with(sk, :p)',
            ExpressionAttributeValues: prefix,
            ConsistentRead: true,
          },
        )
      : paginateQuery(
          { client: doc },
          {
            TableName: table,
            KeyConditionExpression: '#c = :c AND begins_with(sk, :p)',
            ExpressionAttributeNames: { '#c': 'context' },
            ExpressionAttributeValues: { ':c': context, ...prefix },
            ConsistentRead: true,
          },
        ),
  );
  return items.map((item) =>
    parseItem(RecoveryItemSchema, item, table, `${String(item.context)}/${String(item.sk)}`),
  );
}
