import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditional, defined } from './dynamo-calls.js';
import { parseItem } from './parse-item.js';
import { RECONCILE_STATUSES, ReconcileOutcomeSchema } from './recovery-schema.js';

export { RECONCILE_STATUSES };

/** What a reconcile error keeps: one line, at most this many characters. */
export const MAX_RECOVERY_ERROR_CHARS = 500;

/**
 * The last reconcile of a webhook, as the reconcile function recorded it: the trigger that queued it
 * (`reason`), when it was requested, its state and when it got there; counts once completed, the error
 * line once failed. (Read back through `RecoveryItemSchema`, lib/store/recovery-list.ts.)
 */
export interface ReconcileOutcome {
  status: (typeof RECONCILE_STATUSES)[number];
  reason: string;
  requestedAt: string;
  /** When its first invocation started: what orders runs (a run started later is newer). */
  startedAt: string;
  at: string;
  from?: string | undefined;
  to?: string | undefined;
  /** The request's `full` and `entities` (absent: the default scope): what a newer run must cover to supersede it. */
  full?: boolean | undefined;
  entities?: string[] | undefined;
  /** The request's `maxDeletes` (absent: the RECONCILE_MAX_DELETES cap): a newer run must allow as many to supersede it. */
  maxDeletes?: number | undefined;
  rowsListed?: number | undefined;
  rowsChanged?: number | undefined;
  rowsDeleted?: number | undefined;
  apiCalls?: number | undefined;
  durationMs?: number | undefined;
  /** The entities the run left out, with why (`receiver.reconcile.completed`'s notReconciled). */
  notReconciled?: Record<string, string> | undefined;
  /**
   * Of those, the entities whose deletes were held back (more than RECONCILE_MAX_DELETES allows), each
   * with the stored rows the CRM no longer listed: the `maxDeletes` a run needs to delete them.
   */
  deletesHeld?: Record<string, number> | undefined;
  /** The CRM API's clock against its events' Timestamps, in seconds (ahead: positive), when skewed beyond a minute. */
  clockSkewSeconds?: number | undefined;
  error?: string | undefined;
}

/** What became of a webhook's gaps: its last reconcile, and when the poll last set it Active again. */
export interface WebhookRecovery {
  context: string;
  webhookId: number;
  reconcile?: ReconcileOutcome | undefined;
  reactivatedAt?: string | undefined;
}

export interface RecoveryStore {
  /** Records `outcome` unless a newer run's (started later) or a later step of this one is there; false then. */
  recordReconcile(context: string, webhookId: number, outcome: ReconcileOutcome): Promise<boolean>;
  /** The run last recorded for the webhook (consistent read), or undefined. */
  lastReconcile(context: string, webhookId: number): Promise<ReconcileOutcome | undefined>;
  /** Records a reactivation at `at` (ISO) unless a later one is there; false then. */
  recordReactivation(context: string, webhookId: number, at: string): Promise<boolean>;
}

export const RECOVERY_SK_PREFIX = 'recovery#';

/**
 * Every attribute each write names (keys included): what infra/iam.yml lets the reconcile function and
 * the poll update in the webhooks table (`dynamodb:Attributes`), and nothing else.
 */
/** What the reconcile function may read of a recovery item (`lastReconcile`): the run's state, by key. */
export const RECOVERY_READ_ATTRIBUTES = ['context', 'sk', 'reconcile'] as const;

export const RECOVERY_WRITE_ATTRIBUTES = {
  reconcile: ['context', 'sk', 'webhookId', 'reconcile', 'reconcileOrder'],
  reactivation: ['context', 'sk', 'webhookId', 'reactivatedAt', 'reactivatedOrder'],
} as const;

/** Sort key of a webhook's recovery item: its own kind, so no query of webhooks, gaps or markers meets it. */
export function recoverySk(webhookId: number): string {
  return `${RECOVERY_SK_PREFIX}${webhookId}`;
}

/**
 * The recovery items in the stage's webhooks table (`<context>`, `recovery#<id>`): one item per webhook
 * beside its `webhook#<id>` item, never inside it (the state worker puts that one whole). Each write is
 * one UpdateItem of its own attributes, conditional on an order number so that an older run's outcome
 * (or a stale reactivation) never overwrites a newer one: a run is ordered by when it started (a
 * context's runs start in its queue order; a person's request time is rounded to the minute, so not
 * that), its outcome after its start. The dashboard reads them with `listRecoveries` (lib/store/recovery-list.ts).
 */
export function createRecoveryStore(doc: DynamoDBDocumentClient, table: string): RecoveryStore {
  const update = (context: string, webhookId: number, set: string, order: string, values: object) =>
    conditional(() =>
      doc.send(
        new UpdateCommand({
          TableName: table,
          Key: { context, sk: recoverySk(webhookId) },
          UpdateExpression: `SET webhookId = :id, ${set}, #o = :o`,
          ConditionExpression: 'attribute_not_exists(#o) OR #o <= :o',
          ExpressionAttributeNames: { '#o': order },
          ExpressionAttributeValues: { ':id': webhookId, ...values },
        }),
      ),
    );

  return {
    recordReconcile(context, webhookId, outcome) {
      const step = outcome.status === 'running' ? 0 : 1;
      const error = outcome.error === undefined ? undefined : oneLine(outcome.error);
      return update(context, webhookId, 'reconcile = :r', 'reconcileOrder', {
        ':r': defined({ ...outcome, error }),
        ':o': Date.parse(outcome.startedAt) * 2 + step,
      });
    },

    async lastReconcile(context, webhookId) {
      const { Item } = await doc.send(
        new GetCommand({
          TableName: table,
          Key: { context, sk: recoverySk(webhookId) },
          ProjectionExpression: RECOVERY_READ_ATTRIBUTES.map((_, i) => `#a${i}`).join(', '),
          ExpressionAttributeNames: Object.fromEntries(
            RECOVERY_READ_ATTRIBUTES.map((name, i) => [`#a${i}`, name]),
          ),
          ConsistentRead: true,
        }),
      );
      if (Item?.reconcile === undefined) return undefined;
      return parseItem(ReconcileOutcomeSchema, Item.reconcile, table, `${context}/${recoverySk(webhookId)}`);
    },

    recordReactivation(context, webhookId, at) {
      return update(context, webhookId, 'reactivatedAt = :a', 'reactivatedOrder', {
        ':a': at,
        ':o': Date.parse(at),
      });
    },
  };
}

/** An error as one line of at most {@link MAX_RECOVERY_ERROR_CHARS} (the item holds 400 KB; the card, a line). */
function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= MAX_RECOVERY_ERROR_CHARS ? line : `${line.slice(0, MAX_RECOVERY_ERROR_CHARS - 1)}…`;
}
