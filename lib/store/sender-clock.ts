import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ForgetfulMap } from '../forgetful-map.js';
import { acceptedSk } from './keys.js';

/** How long one reading of a context's markers serves (a clock's offset drifts slowly). */
const CACHE_MS = 60_000;

/**
 * How far the sender's clock is ahead of the receiver's, per context: the newest last-accepted marker
 * (`accepted#<WebhookName>`, one Query of the context's markers) that says when its live event arrived,
 * its Timestamp less that arrival (so its delivery time too: a few hundred ms behind the truth);
 * undefined while no marker says. Read at most once a minute per context and process.
 */
export function createSenderClock(doc: DynamoDBDocumentClient, table: string) {
  const cache = new ForgetfulMap<string, { at: number; aheadMs: number | undefined }>();
  return async (context: string): Promise<number | undefined> => {
    const cached = cache.get(context);
    if (cached !== undefined && Date.now() - cached.at < CACHE_MS) return cached.aheadMs;
    const { Items } = await doc.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: '#c = :c AND begins_with(sk, :p)',
        ExpressionAttributeNames: { '#c': 'context', '#t': 'timestamp' },
        ExpressionAttributeValues: { ':c': context, ':p': acceptedSk('') },
        ProjectionExpression: 'seq, #t, receivedAt',
      }),
    );
    let newest: { seq: string; aheadMs: number } | undefined;
    for (const item of Items ?? []) {
      const aheadMs = Date.parse(String(item.timestamp)) - Date.parse(String(item.receivedAt));
      if (Number.isFinite(aheadMs) && (newest === undefined || String(item.seq) > newest.seq))
        newest = { seq: String(item.seq), aheadMs };
    }
    cache.set(context, { at: Date.now(), aheadMs: newest?.aheadMs });
    return newest?.aheadMs;
  };
}
