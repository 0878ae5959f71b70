import { randomUUID } from 'node:crypto';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { ReplayBusyError, type ReplayLock } from '../ingest/replay-lock.js';
import { conditional } from './dynamo-calls.js';
import { OPS_CONTEXT } from './keys.js';

export interface DynamoReplayLockConfig {
  client: DynamoDBDocumentClient;
  /** The webhooks table: the lock is one item there, beside the webhooks (see {@link replayLockKey}). */
  table: string;
  /** How long the lock holds without a renewal: a crashed run keeps the next one out that long. */
  leaseMs?: number;
  now?: () => number;
}

/** A run renews its lease before each batch of 10, which takes seconds: a minute leaves room to spare. */
export const REPLAY_LEASE_MS = 60_000;

/**
 * The lock's item: a sort key of its own kind, so no query or scan of webhooks, gaps or accepted
 * markers (sort keys `webhook#…`, `accepted#…`) meets it, whatever the context.
 */
export const replayLockKey = { context: OPS_CONTEXT, sk: 'replay-lock#parked' } as const;

const HolderSchema = z.object({ since: z.optional(z.string()), expiresAt: z.optional(z.number()) });

/**
 * One replay of the parked queue at a time, by a conditional write in the stage's webhooks table:
 * PutItem succeeds only where no lease exists, the last one ran out (a crashed run's) or it ends
 * more than two leases from now (written by a clock over a lease ahead: without this, a run killed on
 * a machine a day ahead would keep every other out for a day), UpdateItem
 * renews it only for the run that holds it, DeleteItem releases it only for that run. DynamoDB's
 * conditional writes are atomic, so two runs (the dashboard and `ops replay-parked`, on two
 * machines) cannot both hold it; clocks that disagree by more than the lease (either way) could let a
 * second run in early, which costs work, never messages (lib/ingest/replay-parked.ts stays correct beside another run).
 */
export function createDynamoReplayLock(config: DynamoReplayLockConfig): ReplayLock {
  const { client, table } = config;
  const leaseMs = config.leaseMs ?? REPLAY_LEASE_MS;
  const now = config.now ?? Date.now;
  const owner = randomUUID();

  const busy = async (): Promise<never> => {
    const { Item } = await client.send(
      new GetCommand({ TableName: table, Key: replayLockKey, ConsistentRead: true }),
    );
    const holder = HolderSchema.safeParse(Item ?? {});
    const { since, expiresAt } = holder.success ? holder.data : {};
    throw new ReplayBusyError(since, expiresAt === undefined ? undefined : new Date(expiresAt).toISOString());
  };

  return {
    async acquire() {
      const at = now();
      const taken = await conditional(() =>
        client.send(
          new PutCommand({
            TableName: table,
            Item: { ...replayLockKey, owner, since: new Date(at).toISOString(), expiresAt: at + leaseMs },
            // A lease ending more than two leases from now was written by a clock over a lease ahead of
            // this one (within a lease, a clock behind this one must still see a fresh lease as held).
            ConditionExpression: 'attribute_not_exists(sk) OR expiresAt < :now OR expiresAt > :latest',
            ExpressionAttributeValues: { ':now': at, ':latest': at + 2 * leaseMs },
          }),
        ),
      );
      if (!taken) await busy();
    },
    async renew() {
      const renewed = await conditional(() =>
        client.send(
          new UpdateCommand({
            TableName: table,
            Key: replayLockKey,
            UpdateExpression: 'SET expiresAt = :until',
            ConditionExpression: '#owner = :owner',
            ExpressionAttributeNames: { '#owner': 'owner' },
            ExpressionAttributeValues: { ':until': now() + leaseMs, ':owner': owner },
          }),
        ),
      );
      if (!renewed) await busy();
    },
    async release() {
      await conditional(() =>
        client.send(
          new DeleteCommand({
            TableName: table,
            Key: replayLockKey,
            ConditionExpression: '#owner = :owner',
            ExpressionAttributeNames: { '#owner': 'owner' },
            ExpressionAttributeValues: { ':owner': owner },
          }),
        ),
      );
    },
  };
}
