import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  type DynamoDBClient,
  paginateListTables,
  ResourceInUseException,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import {
  type AnyQueueKey,
  type QueueDefinition,
  redriveAllowPolicy,
  redrivePolicy,
  type TableDefinition,
} from '../../infra/definitions.js';

/** A queue of infra/resources.yml as it exists on the emulator, with its dead-letter queue. */
export interface LocalQueue {
  key: AnyQueueKey;
  name: string;
  url: string;
  arn: string;
  envVar: string;
  visibilityTimeout: number;
  dlq: { name: string; url: string; arn: string; maxReceiveCount: number };
}

export interface QueueOverrides {
  /** Replaces every queue's VisibilityTimeout (seconds): quicker retries for experiments and tests. */
  visibilityTimeout?: number;
}

/**
 * Creates each queue the way CloudFormation does from the same definitions: the DLQ first, then the
 * queue with its RedrivePolicy, then the DLQ's RedriveAllowPolicy naming its source. CreateQueue with
 * the same attributes is idempotent, so this is safe to run on every start.
 */
export async function ensureQueues(
  client: SQSClient,
  definitions: readonly QueueDefinition[],
  overrides: QueueOverrides = {},
): Promise<LocalQueue[]> {
  return Promise.all(
    definitions.map(async (definition): Promise<LocalQueue> => {
      const visibility: Record<string, string> =
        overrides.visibilityTimeout === undefined
          ? {}
          : { VisibilityTimeout: String(overrides.visibilityTimeout) };
      const dlqUrl = await createQueue(client, definition.dlq.name, {
        ...definition.dlq.attributes,
        ...visibility,
      });
      const dlqArn = await queueArn(client, dlqUrl);
      const url = await createQueue(client, definition.name, {
        ...definition.attributes,
        ...visibility,
        RedrivePolicy: redrivePolicy(dlqArn, definition.dlq.maxReceiveCount),
      });
      const arn = await queueArn(client, url);
      await client.send(
        new SetQueueAttributesCommand({
          QueueUrl: dlqUrl,
          Attributes: { RedriveAllowPolicy: redriveAllowPolicy(arn) },
        }),
      );
      return {
        key: definition.key,
        name: definition.name,
        url,
        arn,
        envVar: definition.envVar,
        visibilityTimeout: overrides.visibilityTimeout ?? definition.visibilityTimeout,
        dlq: {
          name: definition.dlq.name,
          url: dlqUrl,
          arn: dlqArn,
          maxReceiveCount: definition.dlq.maxReceiveCount,
        },
      };
    }),
  );
}

/** CreateQueue, or, when the queue exists with other attributes, SetQueueAttributes to the definition's. */
async function createQueue(
  client: SQSClient,
  QueueName: string,
  Attributes: Record<string, string>,
): Promise<string> {
  try {
    const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName, Attributes }));
    if (!QueueUrl) throw new Error(`CreateQueue ${QueueName} returned no QueueUrl`);
    return QueueUrl;
  } catch (error) {
    if (!(error instanceof Error && error.name === 'QueueNameExists')) throw error;
    const { QueueUrl } = await client.send(new GetQueueUrlCommand({ QueueName }));
    if (!QueueUrl) throw new Error(`GetQueueUrl ${QueueName} returned no QueueUrl`);
    const { FifoQueue: _immutable, ...mutable } = Attributes;
    await client.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: mutable }));
    return QueueUrl;
  }
}

async function queueArn(client: SQSClient, QueueUrl: string): Promise<string> {
  const { Attributes } = await client.send(
    new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
  );
  const arn = Attributes?.QueueArn;
  if (!arn) throw new Error(`GetQueueAttributes ${QueueUrl} returned no QueueArn`);
  return arn;
}

/**
 * Creates the tables that do not exist yet (they persist across restarts under DATA_DIR) and leaves
 * the others alone. Returns the names it created. TTL is cloud-only: dynalite has no UpdateTimeToLive,
 * so expired history simply stays on disk locally.
 */
export async function ensureTables(
  client: DynamoDBClient,
  definitions: readonly TableDefinition[],
): Promise<string[]> {
  const existing = new Set<string>();
  for await (const page of paginateListTables({ client }, {})) {
    for (const name of page.TableNames ?? []) existing.add(name);
  }
  const created: string[] = [];
  for (const definition of definitions) {
    if (existing.has(definition.name)) continue;
    if (await createTable(client, definition.createTableInput)) created.push(definition.name);
  }
  return created;
}

/**
 * Whether `table` has the global secondary index `index`. A table of a DATA_DIR from before an index
 * lacks it for good: ensureTables leaves existing tables alone, and dynalite cannot add an index.
 */
export async function hasIndex(client: DynamoDBClient, table: string, index: string): Promise<boolean> {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: table }));
  return (Table?.GlobalSecondaryIndexes ?? []).some((candidate) => candidate.IndexName === index);
}

/**
 * CreateTable, then waits until the table is ACTIVE: dynalite, like DynamoDB, answers CreateTable while
 * the table is still CREATING, and refuses items until it is not. Returns false when the table
 * existed already (another creator was first).
 */
export async function createTable(client: DynamoDBClient, input: CreateTableCommandInput): Promise<boolean> {
  let created = true;
  try {
    await client.send(new CreateTableCommand(input));
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
    created = false;
  }
  await waitUntilTableExists(
    { client, maxWaitTime: 30, minDelay: 0.02, maxDelay: 0.5 },
    { TableName: input.TableName },
  );
  return created;
}
