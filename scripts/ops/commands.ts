import { randomUUID } from 'node:crypto';
import { type CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import {
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { type GapView, gapViews } from '../../dashboard/reconcile-routes.js';
import {
  ALL_QUEUE_KEYS,
  type AnyQueueKey,
  QUEUE_ENV_VARS,
  QUEUE_KEYS,
  queueOutputs,
  SERVICE,
  tableOutput,
} from '../../infra/definitions.js';
import { readIngestConfig } from '../../lib/config/ingest.js';
import { isKnownEntity } from '../../lib/events/index.js';
import {
  deliveryPolicy,
  type ReplayFilter,
  type ReplayReport,
  replayParked,
} from '../../lib/ingest/index.js';
import { createSignatureVerifier } from '../../lib/ingest/signature.js';
import type { EventRecord, Row, RowEntity, Webhook } from '../../lib/model/types.js';
import { createSqsSender } from '../../lib/queue/sqs.js';
import { createSqsParkedSource } from '../../lib/queue/sqs-parked.js';
import { createDynamoReplayLock, createDynamoStore, createWebhookStore } from '../../lib/store/index.js';
import { listRecoveries } from '../../lib/store/recovery-list.js';
import type { Store } from '../../lib/store/types.js';

/** The clients every command needs; built once by the CLI, replaced by mocks in tests. */
export interface OpsClients {
  cloudFormation: CloudFormationClient;
  sqs: SQSClient;
  dynamo: DynamoDBDocumentClient;
}

/** The deployed stack's outputs (names from infra/resources.yml and serverless.yml). */
export type StackOutputs = Record<string, string>;

export class OpsError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'OpsError';
  }
}

export function stackName(stage: string): string {
  return `${SERVICE}-${stage}`;
}

/** The CLI spelling of a queue (`webhook-state`) to its key (`webhookState`). */
export function queueKey(name: string): AnyQueueKey {
  const key = name.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
  if (!(ALL_QUEUE_KEYS as string[]).includes(key)) {
    const names = ALL_QUEUE_KEYS.map((known) => known.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`));
    throw new OpsError(`unknown queue ${name}: one of ${names.join(', ')}`);
  }
  return key as AnyQueueKey;
}

/** The outputs of the stage's stack; a stage with no stack in the region is one line saying so. */
export async function readOutputs(clients: OpsClients, stage: string): Promise<StackOutputs> {
  const { Stacks } = await clients.cloudFormation
    .send(new DescribeStacksCommand({ StackName: stackName(stage) }))
    .catch(async (error: unknown) => {
      // CloudFormation's ValidationError "Stack with id … does not exist".
      if (!(error instanceof Error && /does not exist/.test(error.message))) throw error;
      const region = await clients.cloudFormation.config.region();
      throw new OpsError(
        `no stack ${stackName(stage)} in ${region}: check --stage and the region (--region, AWS_REGION), or deploy the stage first`,
        { cause: error },
      );
    });
  const outputs: StackOutputs = {};
  for (const { OutputKey, OutputValue } of Stacks?.[0]?.Outputs ?? []) {
    if (OutputKey !== undefined && OutputValue !== undefined) outputs[OutputKey] = OutputValue;
  }
  return outputs;
}

/** One output of the stack, or an error saying to deploy this version. */
export function output(outputs: StackOutputs, key: string): string {
  const value = outputs[key];
  if (value === undefined) throw new OpsError(`the stack has no output ${key}; deploy this version first`);
  return value;
}

export interface QueueStatus {
  queue: AnyQueueKey;
  visible: number;
  inFlight: number;
  deadLetter: number;
}

/** Messages waiting, in flight and dead-lettered for each queue (the admin API's `GET /queues`). */
export async function status(clients: OpsClients, outputs: StackOutputs): Promise<QueueStatus[]> {
  const counts = async (url: string) => {
    const { Attributes = {} } = await clients.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    return {
      visible: Number(Attributes.ApproximateNumberOfMessages ?? 0),
      inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
    };
  };
  return Promise.all(
    ALL_QUEUE_KEYS.map(async (queue) => {
      const [main, dlq] = await Promise.all([
        counts(output(outputs, queueOutputs(queue).url)),
        counts(output(outputs, queueOutputs(queue).dlqUrl)),
      ]);
      return { queue, ...main, deadLetter: dlq.visible + dlq.inFlight };
    }),
  );
}

export interface ParkedDelivery {
  messageId: string;
  groupId: string | undefined;
  receiveCount: number;
  attributes: Record<string, string>;
  body: string;
}

/**
 * A look at up to `max` parked deliveries with their reason (the admin API's `GET /parked`), in the
 * parked queue or (`dlq`) its DLQ. SQS has no peek: each look is a receive (the messages reappear
 * after 30 s), and after 5 looks a parked message moves to the parked DLQ, where it is kept just as
 * long and can be redriven; the DLQ has no redrive policy, so looking there moves nothing.
 */
export async function parked(
  clients: OpsClients,
  outputs: StackOutputs,
  max = 10,
  where: 'parked' | 'dlq' = 'parked',
): Promise<ParkedDelivery[]> {
  const url = output(outputs, where === 'dlq' ? queueOutputs('parked').dlqUrl : queueOutputs('parked').url);
  const found: ParkedDelivery[] = [];
  while (found.length < max) {
    const { Messages = [] } = await clients.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: Math.min(10, max - found.length),
        VisibilityTimeout: 30,
        WaitTimeSeconds: 0,
        MessageSystemAttributeNames: ['MessageGroupId', 'ApproximateReceiveCount'],
        MessageAttributeNames: ['All'],
      }),
    );
    if (Messages.length === 0) break;
    for (const message of Messages) {
      found.push({
        messageId: message.MessageId ?? '',
        groupId: message.Attributes?.MessageGroupId,
        receiveCount: Number(message.Attributes?.ApproximateReceiveCount ?? 0),
        attributes: Object.fromEntries(
          Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [
            name,
            value.StringValue ?? '',
          ]),
        ),
        body: message.Body ?? '',
      });
    }
  }
  return found;
}

/**
 * Moves a queue's dead-lettered messages back to the queue they came from (SQS StartMessageMoveTask,
 * which keeps FIFO order per message group). `maxPerSecond` throttles the move.
 */
export async function redrive(
  clients: OpsClients,
  outputs: StackOutputs,
  queue: AnyQueueKey,
  maxPerSecond?: number,
): Promise<{ queue: AnyQueueKey; taskHandle: string }> {
  const { TaskHandle } = await clients.sqs.send(
    new StartMessageMoveTaskCommand({
      SourceArn: output(outputs, queueOutputs(queue).dlqArn),
      ...(maxPerSecond === undefined ? {} : { MaxNumberOfMessagesPerSecond: maxPerSecond }),
    }),
  );
  return { queue, taskHandle: TaskHandle ?? '' };
}

/** One row and, when asked, its history (the admin API's `GET /rows/...` and `.../events`), for any entity the registry accepts. */
export async function rows(
  clients: OpsClients,
  outputs: StackOutputs,
  args: { context: string; entity: string; primaryKey: number; events: boolean },
): Promise<{ row: Row | undefined; events?: EventRecord[] }> {
  if (!isKnownEntity(args.entity))
    throw new OpsError(
      'entity must be an entity of the catalogue (contact, person, ...), list.<name> or y_<table>',
    );
  if (!Number.isSafeInteger(args.primaryKey)) throw new OpsError('primaryKey must be an integer');
  const entity = args.entity as RowEntity;
  const store = stageStore(clients, outputs);
  const row = await store.getRow(args.context, entity, args.primaryKey);
  if (!args.events) return { row };
  return { row, events: await store.listRowEvents(args.context, entity, args.primaryKey) };
}

/** The stage's tables as a store, for reading. */
export function stageStore(clients: OpsClients, outputs: StackOutputs): Store {
  return createDynamoStore({
    client: clients.dynamo,
    tables: {
      rows: output(outputs, tableOutput('rows')),
      events: output(outputs, tableOutput('events')),
      webhooks: output(outputs, tableOutput('webhooks')),
    },
    retentionDays: 1, // read-only here; the workers' EVENT_RETENTION_DAYS applies to writes
  });
}

/**
 * Replays the parked queue of a stage (see lib/ingest/replay-parked.ts) with the deployed ingest's
 * settings (the `IngestSettings` output, serverless.yml's custom.ingestEnvironment.published: ENTITIES,
 * ALLOW_UNSIGNED, MAX_EVENT_AGE_SECONDS, ...). The secrets live in SSM, which this command does not
 * read: every context counts as having one, so an unsigned parked delivery (ALLOW_UNSIGNED) stays
 * parked (`signature-missing`); signed ones and state events with the token replay. One replay per
 * stage at a time: the lock is an item of the webhooks table (lib/store/replay-lock.ts).
 */
export async function replayParkedOnStage(
  clients: OpsClients,
  outputs: StackOutputs,
  options: ReplayFilter,
): Promise<ReplayReport> {
  const settings = IngestSettingsSchema.safeParse(JSON.parse(output(outputs, 'IngestSettings')));
  if (!settings.success)
    throw new OpsError('the stack output IngestSettings is not the JSON this version writes');
  const env: Record<string, string> = { ...settings.data };
  for (const key of QUEUE_KEYS) env[QUEUE_ENV_VARS[key]] = output(outputs, queueOutputs(key).url);
  const config = readIngestConfig(env);
  return replayParked({
    source: createSqsParkedSource({ client: clients.sqs, queueUrl: config.queueUrls.parked }),
    sender: createSqsSender({ client: clients.sqs, queueUrls: config.queueUrls }),
    policy: deliveryPolicy(config, createSignatureVerifier({ fallback: [randomUUID()], byContext: {} })),
    lock: createDynamoReplayLock({ client: clients.dynamo, table: output(outputs, tableOutput('webhooks')) }),
    ...options,
  });
}

const IngestSettingsSchema = z.record(z.string(), z.string());

/** Every webhook and its state (the admin API's `GET /webhooks`). */
export async function webhooks(clients: OpsClients, outputs: StackOutputs): Promise<Webhook[]> {
  return createWebhookStore({
    client: clients.dynamo,
    table: output(outputs, tableOutput('webhooks')),
  }).listWebhooks();
}

/** The windows in which a webhook was not Active, with its recovery (the admin API's `GET /gaps?context=`). */
export async function gaps(clients: OpsClients, outputs: StackOutputs, context?: string): Promise<GapView[]> {
  const table = output(outputs, tableOutput('webhooks'));
  const store = createWebhookStore({ client: clients.dynamo, table });
  return gapViews(
    { listWebhooks: store.listWebhooks, listRecoveries: (ctx) => listRecoveries(clients.dynamo, table, ctx) },
    context,
  );
}
