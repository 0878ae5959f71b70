import { type DynamoDBDocumentClient, GetCommand, PutCommand, paginateScan } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { collect, conditional, defined } from './dynamo-calls.js';
import { OPS_CONTEXT, WEBHOOK_SK_PREFIX } from './keys.js';
import type { Versioned } from './types.js';

/**
 * What the poll of the CRM's webhooks remembers of one webhook between polls, in the webhooks table
 * beside the replay lock (`#ops` partition, sort key `watch#<context>#<id>`: no query of a context's
 * webhooks, gaps or markers meets it).
 */
export const WatchMemorySchema = z.object({
  /** The CRM's state at the last poll (`Active`, `Stopped`, `TooManyErrors`). */
  state: z.string(),
  /** The last poll that found it Active (ms, this clock): a window opened later starts there. */
  lastHealthyAt: z.number(),
  totalErrors: z.number(),
  lastError: z.string(),
  /** Re-activations tried since it was last Active, when the next may be tried, whether the alert went. */
  attempts: z.optional(z.number()),
  nextAttemptAt: z.optional(z.number()),
  alerted: z.optional(z.boolean()),
  /** When the poll last set it Active (ms): until it stays so for a while, its attempts still count. */
  reactivatedAt: z.optional(z.number()),
  /** When a poll wrote this (ms): a poll that read the CRM before then acts on nothing (it read an older CRM). */
  writtenAt: z.optional(z.number()),
  /** Reconcile requests written here before they are enqueued (JSON): a crash in between re-sends them. */
  pending: z.optional(z.string()),
});
export type WatchMemory = z.infer<typeof WatchMemorySchema>;

/** What the poll remembers of a context's scheduled full pass (RECONCILE_FULL_HOURS), sort key `full#<context>`. */
export const FullPassMemorySchema = z.object({
  /** When the last full pass was requested (ms, this clock): the next is due an interval later. */
  requestedAt: z.number(),
  /** The request written here before it is enqueued (JSON, as `WatchMemory.pending`): the next poll re-sends it. */
  pending: z.optional(z.string()),
});
export type FullPassMemory = z.infer<typeof FullPassMemorySchema>;

/** A schedule fires a little early or late: what is due within a tenth of the interval (5 s at most) is due now. */
export function scheduleSlackMs(intervalMs: number): number {
  return Math.min(5000, Math.floor(intervalMs / 10));
}

const POLL_SLOT_SK = 'watch#poll';

/** The webhook names the receiver's deliveries carried, by context. */
export type DeliveryNames = Map<string, Set<string>>;

export interface WatchStore {
  /** Contexts and WebhookNames from the webhook items and the `accepted#<WebhookName>` markers. */
  deliveryNames(): Promise<DeliveryNames>;
  /**
   * Claims the poll due now: true for one caller only while the last claim is younger than
   * `intervalMs`, so polls started at once (two schedules, a slow one overlapping the next) poll once.
   */
  claimPoll(now: number, intervalMs: number): Promise<boolean>;
  load(context: string, webhookId: number): Promise<Versioned<WatchMemory>>;
  /** Writes `memory` only over `version` (0: none yet); false when another poll wrote first. */
  save(context: string, webhookId: number, memory: WatchMemory, version: number): Promise<boolean>;
  /** The context's scheduled full pass, as `load` and `save` for a webhook. */
  loadFullPass(context: string): Promise<Versioned<FullPassMemory>>;
  saveFullPass(context: string, memory: FullPassMemory, version: number): Promise<boolean>;
}

type Key = { context: string; sk: string };

/** The watch's items in the stage's webhooks table (conditional writes: two polls never both act). */
export function createWatchStore(doc: DynamoDBDocumentClient, table: string): WatchStore {
  const key = (context: string, webhookId: number): Key => ({
    context: OPS_CONTEXT,
    sk: `watch#${context}#${webhookId}`,
  });
  const fullPassKey = (context: string) => ({ context: OPS_CONTEXT, sk: `full#${context}` });

  async function read<T>(key: Key, schema: z.ZodMiniType<T>): Promise<Versioned<T>> {
    const { Item } = await doc.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }));
    if (Item === undefined) return { item: undefined, version: 0 };
    const parsed = z.safeParse(schema, Item);
    // An item this code cannot read is replaced, as if first seen.
    return { item: parsed.success ? parsed.data : undefined, version: Number(Item.version ?? 0) };
  }

  function write(key: Key, memory: object, version: number): Promise<boolean> {
    const item = { ...defined(memory), ...key, version: version + 1 };
    return conditional(() =>
      doc.send(
        new PutCommand({
          TableName: table,
          Item: item,
          ...(version === 0
            ? { ConditionExpression: 'attribute_not_exists(sk)' }
            : {
                ConditionExpression: '#v = :v',
                ExpressionAttributeNames: { '#v': 'version' },
                ExpressionAttributeValues: { ':v': version },
              }),
        }),
      ),
    );
  }

  return {
    async deliveryNames() {
      const items = await collect(
        paginateScan(
          { client: doc },
          {
            TableName: table,
            FilterExpression: 'begins_with(sk, :w) OR begins_with(sk, :a)',
            ExpressionAttributeValues: { ':w': WEBHOOK_SK_PREFIX, ':a': 'accepted#' },
            ProjectionExpression: '#c, sk, webhookName',
            ExpressionAttributeNames: { '#c': 'context' },
          },
        ),
      );
      const names: DeliveryNames = new Map();
      for (const item of items) {
        const context = String(item.context);
        const sk = String(item.sk);
        const name =
          typeof item.webhookName === 'string'
            ? item.webhookName
            : sk.startsWith('accepted#sha256:')
              ? undefined // a name too long for a sort key: no CRM webhook has one
              : sk.slice('accepted#'.length);
        if (context === OPS_CONTEXT || name === undefined) continue;
        names.set(context, (names.get(context) ?? new Set()).add(name));
      }
      return names;
    },

    claimPoll(now, intervalMs) {
      const due = now - intervalMs + scheduleSlackMs(intervalMs);
      return conditional(() =>
        doc.send(
          new PutCommand({
            TableName: table,
            Item: { context: OPS_CONTEXT, sk: POLL_SLOT_SK, at: now },
            ConditionExpression: 'attribute_not_exists(sk) OR #at <= :due OR #at > :ahead',
            ExpressionAttributeNames: { '#at': 'at' },
            // A claim dated ahead of now by more than an interval was written by a clock far ahead.
            ExpressionAttributeValues: { ':due': due, ':ahead': now + intervalMs },
          }),
        ),
      );
    },

    load: (context, webhookId) => read(key(context, webhookId), WatchMemorySchema),
    save: (context, webhookId, memory, version) => write(key(context, webhookId), memory, version),
    loadFullPass: (context) => read(fullPassKey(context), FullPassMemorySchema),
    saveFullPass: (context, memory, version) => write(fullPassKey(context), memory, version),
  };
}
