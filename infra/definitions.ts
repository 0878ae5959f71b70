/**
 * The receiver's queues and tables as one typed model, read from infra/resources.yml — the same file
 * serverless.yml deploys — so the local runtime and the cloud cannot drift.
 *
 * ```ts
 * const { queues, tables } = loadDefinitions({ stage: 'local' });
 * // queues: contact, activity, webhookState, entities, parked, reconcile (ALL_QUEUE_KEYS, in that order)
 * //   { key, name: 'crm-webhook-receiver-local-contact.fifo', envVar: 'CONTACT_QUEUE_URL', fifo: true,
 * //     visibilityTimeout: 180, messageRetentionPeriod: 1209600,
 * //     attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'false', ... },  // CreateQueue Attributes
 * //     dlq: { name: '...-contact-dlq.fifo', maxReceiveCount: 5, attributes: { ... } } }
 * // tables: rows, events, webhooks (in that order)
 * //   { key, name: 'crm-webhook-receiver-local-rows', envVar: 'ROWS_TABLE',
 * //     createTableInput: { TableName, AttributeDefinitions, KeySchema, BillingMode, GlobalSecondaryIndexes? },
 * //     ttlAttribute?: 'expiresAt' }
 * ```
 *
 * The redrive wiring needs ARNs that exist only once both queues do, so it is not in `attributes`:
 * create the DLQ, then the queue with `RedrivePolicy: redrivePolicy(dlqArn, dlq.maxReceiveCount)`, then set
 * `RedriveAllowPolicy: redriveAllowPolicy(queueArn)` on the DLQ.
 * Point-in-time recovery and deletion protection are cloud-only and are not part of `createTableInput`.
 *
 * The queues are those of ALL_QUEUE_ENV_VARS (lib/queue/port.ts), each `<Key>Queue` in infra/resources.yml
 * ({@link queueLogicalId}); serverless.yml gives the ingest the URLs of QUEUE_ENV_VARS' alone from
 * {@link queueEnvironment} (the reconcile queue is not the ingest's).
 */
import { readFileSync } from 'node:fs';
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { load } from 'js-yaml';
import * as z from 'zod';
import {
  ALL_QUEUE_ENV_VARS,
  ALL_QUEUE_KEYS,
  type AnyQueueKey,
  OWN_QUEUE_ENV_VARS,
  QUEUE_ENV_VARS,
  QUEUE_KEYS,
  type QueueKey,
} from '../lib/queue/port.js';
import { EVENT_ID_INDEX, ROW_SET_INDEX } from '../lib/store/keys.js';
import { TABLE_ENV_VARS, TABLE_KEYS, type TableKey } from '../lib/store/tables.js';
import { loadServerless } from './serverless-file.js';
import { resolveConditions, resolveName } from './template-values.js';

export {
  ALL_QUEUE_ENV_VARS,
  ALL_QUEUE_KEYS,
  type AnyQueueKey,
  OWN_QUEUE_ENV_VARS,
  QUEUE_ENV_VARS,
  QUEUE_KEYS,
  type QueueKey,
  TABLE_ENV_VARS,
  TABLE_KEYS,
  type TableKey,
};

/** The service name of serverless.yml; names are `${service}-${stage}-<suffix>`. */
export const SERVICE = 'crm-webhook-receiver';

export interface DeadLetterQueueDefinition {
  logicalId: string;
  name: string;
  maxReceiveCount: number;
  /** CreateQueue Attributes, without RedriveAllowPolicy (see {@link redriveAllowPolicy}). */
  attributes: Record<string, string>;
}

export interface QueueDefinition {
  key: AnyQueueKey;
  logicalId: string;
  name: string;
  envVar: (typeof ALL_QUEUE_ENV_VARS)[AnyQueueKey];
  fifo: boolean;
  visibilityTimeout: number;
  messageRetentionPeriod: number;
  /** CreateQueue Attributes, without RedrivePolicy (see {@link redrivePolicy}). */
  attributes: Record<string, string>;
  dlq: DeadLetterQueueDefinition;
}

export interface TableDefinition {
  key: TableKey;
  logicalId: string;
  name: string;
  envVar: (typeof TABLE_ENV_VARS)[TableKey];
  createTableInput: CreateTableCommandInput;
  ttlAttribute?: string;
}

export interface Definitions {
  queues: QueueDefinition[];
  tables: TableDefinition[];
}

export interface LoadDefinitionsOptions {
  stage: string;
  service?: string;
  /** Defaults to infra/resources.yml next to this module. */
  resourcesPath?: string | URL;
  /**
   * The `eventIdIndex` stage param (the HasEventIdIndex condition): whether the events table has its
   * {@link EVENT_ID_INDEX}. Default true: the local runtime keeps it (dynalite charges nothing).
   */
  eventIdIndex?: boolean;
}

const QueuePropertiesSchema = z.object({
  QueueName: z.string(),
  FifoQueue: z.boolean(),
  ContentBasedDeduplication: z.boolean(),
  DeduplicationScope: z.enum(['messageGroup', 'queue']),
  FifoThroughputLimit: z.enum(['perMessageGroupId', 'perQueue']),
  VisibilityTimeout: z.number().int(),
  MessageRetentionPeriod: z.number().int(),
  SqsManagedSseEnabled: z.boolean(),
  RedrivePolicy: z.object({ deadLetterTargetArn: z.unknown(), maxReceiveCount: z.number().int() }).optional(),
  RedriveAllowPolicy: z.unknown().optional(),
});
type QueueProperties = z.infer<typeof QueuePropertiesSchema>;

const TablePropertiesSchema = z.object({
  TableName: z.string(),
  BillingMode: z.literal('PAY_PER_REQUEST'),
  AttributeDefinitions: z.array(
    z.object({ AttributeName: z.string(), AttributeType: z.enum(['S', 'N', 'B']) }),
  ),
  KeySchema: z.array(z.object({ AttributeName: z.string(), KeyType: z.enum(['HASH', 'RANGE']) })),
  TimeToLiveSpecification: z.object({ AttributeName: z.string(), Enabled: z.boolean() }).optional(),
  GlobalSecondaryIndexes: z
    .array(
      z.object({
        IndexName: z.string(),
        KeySchema: z.array(z.object({ AttributeName: z.string(), KeyType: z.enum(['HASH', 'RANGE']) })),
        Projection: z.object({ ProjectionType: z.enum(['KEYS_ONLY', 'INCLUDE', 'ALL']) }),
      }),
    )
    .optional(),
});

const TemplateSchema = z.object({
  Resources: z.record(
    z.string(),
    z.object({ Type: z.string(), Properties: z.record(z.string(), z.unknown()) }),
  ),
});

const DEFAULT_RESOURCES = new URL('./resources.yml', import.meta.url);

const ServerlessCustomSchema = z.object({ custom: z.record(z.string(), z.unknown()) });

/**
 * Reads infra/resources.yml and returns the queues and tables it defines, named for `stage`, with
 * `${self:custom.X}` taken from serverless.yml's `custom` (as the Serverless Framework resolves it).
 */
export function loadDefinitions(options: LoadDefinitionsOptions): Definitions {
  const { stage, service = SERVICE, resourcesPath = DEFAULT_RESOURCES } = options;
  const { custom } = ServerlessCustomSchema.parse(loadServerless());
  const text = readFileSync(resourcesPath, 'utf8').replace(
    /\$\{self:custom\.([A-Za-z0-9]+)\}/g,
    (_, key: string) => {
      const value = custom[key];
      if (typeof value !== 'string' && typeof value !== 'number')
        throw new Error(`infra/resources.yml uses \${self:custom.${key}}, which serverless.yml does not set`);
      return String(value);
    },
  );
  const { Resources } = TemplateSchema.parse(load(text));
  const conditions = { HasEventIdIndex: options.eventIdIndex ?? true };
  const properties = (logicalId: string): Record<string, unknown> => {
    const resource = Resources[logicalId];
    if (!resource) throw new Error(`infra/resources.yml has no resource ${logicalId}`);
    return resolveConditions(resource.Properties, conditions) as Record<string, unknown>;
  };
  const resolve = (name: string): string => resolveName(name, { service, stage });

  const queues = ALL_QUEUE_KEYS.map((key): QueueDefinition => {
    const logicalId = queueLogicalId(key);
    const queue = QueuePropertiesSchema.parse(properties(logicalId));
    const dlqLogicalId = `${pascal(key)}DeadLetterQueue`;
    const dlq = QueuePropertiesSchema.parse(properties(dlqLogicalId));
    if (!queue.RedrivePolicy) throw new Error(`${logicalId} has no RedrivePolicy`);
    return {
      key,
      logicalId,
      name: resolve(queue.QueueName),
      envVar: ALL_QUEUE_ENV_VARS[key],
      fifo: queue.FifoQueue,
      visibilityTimeout: queue.VisibilityTimeout,
      messageRetentionPeriod: queue.MessageRetentionPeriod,
      attributes: queueAttributes(queue),
      dlq: {
        logicalId: dlqLogicalId,
        name: resolve(dlq.QueueName),
        maxReceiveCount: queue.RedrivePolicy.maxReceiveCount,
        attributes: queueAttributes(dlq),
      },
    };
  });

  const tables = TABLE_KEYS.map((key): TableDefinition => {
    const logicalId = `${pascal(key)}Table`;
    const table = TablePropertiesSchema.parse(properties(logicalId));
    const name = resolve(table.TableName);
    const ttl = table.TimeToLiveSpecification;
    return {
      key,
      logicalId,
      name,
      envVar: TABLE_ENV_VARS[key],
      createTableInput: {
        TableName: name,
        AttributeDefinitions: table.AttributeDefinitions,
        KeySchema: table.KeySchema,
        BillingMode: table.BillingMode,
        ...(table.GlobalSecondaryIndexes && { GlobalSecondaryIndexes: table.GlobalSecondaryIndexes }),
      },
      ...(ttl?.Enabled ? { ttlAttribute: ttl.AttributeName } : {}),
    };
  });

  const indexOf = (key: TableKey, name: string) =>
    tables
      .find((table) => table.key === key)
      ?.createTableInput.GlobalSecondaryIndexes?.some((index) => index.IndexName === name) ?? false;
  if (indexOf('events', EVENT_ID_INDEX) !== conditions.HasEventIdIndex)
    throw new Error(
      `infra/resources.yml: EventsTable's index ${EVENT_ID_INDEX} does not follow HasEventIdIndex`,
    );
  // The index names the code queries (lib/store/keys.ts) are the ones infra/resources.yml declares.
  if (!indexOf('rows', ROW_SET_INDEX))
    throw new Error(`infra/resources.yml: RowsTable has no index ${ROW_SET_INDEX} (lib/store/keys.ts)`);
  return { queues, tables };
}

/** The logical id of a queue in infra/resources.yml: `ContactQueue` for `contact`. */
export function queueLogicalId(key: AnyQueueKey): string {
  return `${pascal(key)}Queue`;
}

/**
 * The stack outputs infra/resources.yml declares for a queue and its DLQ (what ops reads):
 * `ContactQueueUrl`, `ContactDeadLetterQueueUrl`, `ContactDeadLetterQueueArn` for `contact`.
 */
export function queueOutputs(key: AnyQueueKey): { url: string; dlqUrl: string; dlqArn: string } {
  const queue = pascal(key);
  return {
    url: `${queue}QueueUrl`,
    dlqUrl: `${queue}DeadLetterQueueUrl`,
    dlqArn: `${queue}DeadLetterQueueArn`,
  };
}

/** The stack output that names a table in infra/resources.yml: `RowsTableName` for `rows`. */
export function tableOutput(key: TableKey): string {
  return `${pascal(key)}TableName`;
}

/**
 * The queue variables of the ingest's environment as serverless.yml deploys them (through
 * infra/ingest-environment.cjs): one per key of QUEUE_ENV_VARS, `{ CONTACT_QUEUE_URL: { Ref: 'ContactQueue' }, ... }`.
 */
export function queueEnvironment(): Record<string, { Ref: string }> {
  return Object.fromEntries(QUEUE_KEYS.map((key) => [QUEUE_ENV_VARS[key], { Ref: queueLogicalId(key) }]));
}

/** The RedrivePolicy attribute of a source queue, as SQS CreateQueue/SetQueueAttributes expects it. */
export function redrivePolicy(deadLetterTargetArn: string, maxReceiveCount: number): string {
  return JSON.stringify({ deadLetterTargetArn, maxReceiveCount });
}

/** The RedriveAllowPolicy attribute of a dead-letter queue: only its own source queue may use it. */
export function redriveAllowPolicy(sourceQueueArn: string): string {
  return JSON.stringify({ redrivePermission: 'byQueue', sourceQueueArns: [sourceQueueArn] });
}

function queueAttributes(queue: QueueProperties): Record<string, string> {
  return {
    FifoQueue: String(queue.FifoQueue),
    ContentBasedDeduplication: String(queue.ContentBasedDeduplication),
    DeduplicationScope: queue.DeduplicationScope,
    FifoThroughputLimit: queue.FifoThroughputLimit,
    VisibilityTimeout: String(queue.VisibilityTimeout),
    MessageRetentionPeriod: String(queue.MessageRetentionPeriod),
    SqsManagedSseEnabled: String(queue.SqsManagedSseEnabled),
  };
}

function pascal(key: string): string {
  return key.charAt(0).toUpperCase() + key.slice(1);
}
