import { createHash } from 'node:crypto';

/** DynamoDB's largest partition key (rows and events: `rowKey`; webhooks: `context`), in UTF-8 bytes. */
export const MAX_PARTITION_KEY_BYTES = 2048;

/** DynamoDB's largest sort key (webhooks: `accepted#<WebhookName>`, `webhook#<id>`), in UTF-8 bytes. */
export const MAX_SORT_KEY_BYTES = 1024;

/** Partition key of a row (and of its history): context last, so a `#` inside it stays unambiguous. */
export function rowKey(context: string, entity: string, primaryKey: number): string {
  return `${entity}#${primaryKey}#${context}`;
}

/**
 * The parts of a {@link rowKey}, `undefined` when `key` is not one (its primary key not an integer): the
 * row items hold context, entity and primary key in the key only.
 */
export function parseRowKey(
  key: string,
): { context: string; entity: string; primaryKey: number } | undefined {
  const [entity, primaryKey, ...context] = key.split('#');
  const pk = Number(primaryKey);
  if (!entity || context.length === 0 || !/^-?\d+$/.test(primaryKey ?? '') || !Number.isSafeInteger(pk))
    return undefined;
  return { context: context.join('#'), entity, primaryKey: pk };
}

/**
 * Key of the rows table's `byRowSet` index: the rows of one entity of one context (context last, as in
 * {@link rowKey}), sorted there by `rowPk`, the primary key.
 */
export function rowSetKey(context: string, entity: string): string {
  return `${entity}#${context}`;
}

/** The rows table's index of {@link rowSetKey}: KEYS_ONLY, written once per row (its keys never change). */
export const ROW_SET_INDEX = 'byRowSet';

/**
 * The webhooks table's partition of the receiver's own bookkeeping items (the watch's memory, the
 * replay lock): no context is spelt with `#`, so no tenant's query meets them.
 */
export const OPS_CONTEXT = '#ops';

/**
 * The events table's index by EventId (keys only: rowKey and seq), opt-in (the eventIdIndex param):
 * the dashboard's find by EventId.
 */
export const EVENT_ID_INDEX = 'byEventId';

/** Sort key of a webhook item in the webhooks table. */
export function webhookSk(webhookId: number): string {
  return `webhook#${webhookId}`;
}

/**
 * Sort key of the last-accepted marker of a context for one WebhookName. A name too long for a sort
 * key (1,024 bytes) is keyed by its SHA-256 instead, so every accepted WebhookName gets its marker.
 */
export function acceptedSk(webhookName: string): string {
  const key = `accepted#${webhookName}`;
  if (Buffer.byteLength(key) <= MAX_SORT_KEY_BYTES) return key;
  return `accepted#sha256:${createHash('sha256').update(webhookName).digest('hex')}`;
}

export const WEBHOOK_SK_PREFIX = 'webhook#';
