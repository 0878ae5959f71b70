import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  paginateQuery,
  paginateScan,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { collect, conditional, defined, versionedPut } from '../store/dynamo-calls.js';
import { VersionConflictError } from '../store/errors.js';
import { OPS_CONTEXT, WEBHOOK_SK_PREFIX } from '../store/keys.js';

/** Where a tenant is in its life with the receiver. */
export const TENANT_STATUSES = ['onboarding', 'active', 'offboarding', 'offboarded'] as const;

const SecretEntrySchema = z.object({
  /** The secret's fingerprint (lib/tenants/secret-set.ts), never the secret. */
  fingerprint: z.string(),
  addedAt: z.string(),
  /** When the secret set first held it: every ingest accepts it from this time + the propagation. */
  acceptedAt: z.optional(z.string()),
  /** When it stops being accepted: set when a newer secret replaced it, or on offboarding. */
  retireAt: z.optional(z.string()),
});

export const TenantRecordSchema = z.object({
  context: z.string(),
  status: z.enum(TENANT_STATUSES),
  dataWebhookId: z.optional(z.number()),
  stateWebhookId: z.optional(z.number()),
  events: z.optional(z.array(z.string())),
  secrets: z.array(SecretEntrySchema),
  /** The tenant's state as the CRM's state endpoint last said (Running, Suspended, ...). */
  tenantState: z.optional(z.string()),
  endpoint: z.optional(z.string()),
  onboardedAt: z.optional(z.string()),
  offboardedAt: z.optional(z.string()),
  updatedAt: z.string(),
  version: z.number(),
});
export type TenantRecord = z.infer<typeof TenantRecordSchema>;
export type SecretEntry = z.infer<typeof SecretEntrySchema>;

const RECORD_SK = 'tenant';
const LEASE_SK = 'tenant-lease';

/** The tenants' records and their leases, in the webhooks table (beside `webhook#<id>` items). */
export interface TenantStore {
  get(context: string): Promise<TenantRecord | undefined>;
  list(): Promise<TenantRecord[]>;
  /** Writes the record if it is still at `record.version` (0: none yet); false when another writer was first. */
  put(record: TenantRecord): Promise<boolean>;
  /** Takes the lease on `key` for `ms` unless another owner holds one that has not expired. */
  lease(key: string, owner: string, ms: number): Promise<boolean>;
  release(key: string, owner: string): Promise<void>;
  /**
   * Deletes what makes the poll watch a context and schedule its full passes: its webhook state items,
   * its last-accepted markers and the poll's memory of it. Answers how many items it deleted.
   */
  forgetDeliveries(context: string): Promise<number>;
}

export function dynamoTenantStore({
  client,
  table,
}: {
  client: DynamoDBDocumentClient;
  table: string;
}): TenantStore {
  const parse = (item: Record<string, unknown>): TenantRecord => {
    const { sk: _, ...fields } = item;
    const parsed = z.safeParse(TenantRecordSchema, fields);
    if (!parsed.success)
      throw new Error(`${table}: the tenant record of ${String(item.context)} is not one this version reads`);
    return parsed.data;
  };
  const keysOf = async (partition: string, prefixes: readonly string[]) => {
    const items = await collect(
      paginateQuery(
        { client },
        {
          TableName: table,
          KeyConditionExpression: '#c = :c',
          ExpressionAttributeNames: { '#c': 'context' },
          ExpressionAttributeValues: { ':c': partition },
          ProjectionExpression: '#c, sk',
          ConsistentRead: true,
        },
      ),
    );
    return items.filter((item) =>
      prefixes.some((prefix) =>
        prefix.endsWith('#') ? String(item.sk).startsWith(prefix) : item.sk === prefix,
      ),
    );
  };
  return {
    async forgetDeliveries(context) {
      const keys = [
        ...(await keysOf(context, [WEBHOOK_SK_PREFIX, 'accepted#'])),
        // A prefix ends in `#`; anything else is a whole sort key (`full#Cust1`, not `full#Cust10`).
        ...(await keysOf(OPS_CONTEXT, [`watch#${context}#`, `full#${context}`])),
      ];
      for (const key of keys)
        await client.send(new DeleteCommand({ TableName: table, Key: { context: key.context, sk: key.sk } }));
      return keys.length;
    },
    async get(context) {
      const answer = await client.send(
        new GetCommand({ TableName: table, Key: { context, sk: RECORD_SK }, ConsistentRead: true }),
      );
      return answer.Item ? parse(answer.Item) : undefined;
    },
    async list() {
      const items = await collect(
        paginateScan(
          { client },
          {
            TableName: table,
            FilterExpression: 'sk = :sk',
            ExpressionAttributeValues: { ':sk': RECORD_SK },
            ConsistentRead: true,
          },
        ),
      );
      return items.map(parse).sort((a, b) => (a.context < b.context ? -1 : a.context > b.context ? 1 : 0));
    },
    async put(record) {
      const item = defined({ ...record, sk: RECORD_SK, version: record.version + 1 });
      try {
        await versionedPut(client, table, item, 'context', record.context, record.version);
        return true;
      } catch (error) {
        if (error instanceof VersionConflictError) return false;
        throw error;
      }
    },
    async lease(key, owner, ms) {
      const now = Date.now();
      return conditional(() =>
        client.send(
          new UpdateCommand({
            TableName: table,
            Key: { context: key, sk: LEASE_SK },
            UpdateExpression: 'SET #o = :o, #u = :u',
            ConditionExpression: 'attribute_not_exists(#o) OR #o = :o OR #u < :now',
            ExpressionAttributeNames: { '#o': 'owner', '#u': 'until' },
            ExpressionAttributeValues: { ':o': owner, ':u': now + ms, ':now': now },
          }),
        ),
      );
    },
    async release(key, owner) {
      await conditional(() =>
        client.send(
          new DeleteCommand({
            TableName: table,
            Key: { context: key, sk: LEASE_SK },
            ConditionExpression: '#o = :o',
            ExpressionAttributeNames: { '#o': 'owner' },
            ExpressionAttributeValues: { ':o': owner },
          }),
        ),
      );
    },
  };
}
