import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DeliveryFeed } from '../../dashboard/activity.js';
import type { Definitions } from '../../infra/definitions.js';
import type { ServerlessFunction } from '../../infra/functions.js';
import { readBusConfig } from '../../lib/config/bus.js';
import { readCrmConfig } from '../../lib/config/crm.js';
import { ConfigError } from '../../lib/config/env.js';
import { readIngestConfig } from '../../lib/config/ingest.js';
import { MAX_RECEIVE_COUNT_ENV_VAR } from '../../lib/config/reconcile.js';
import { readWatchConfig } from '../../lib/config/watch.js';
import { readRowWorkerConfig, readStateWorkerConfig } from '../../lib/config/workers.js';
import { METRICS_NAMESPACE } from '../../lib/metrics.js';
import type { DynamoEmulator } from '../emulators/dynamo-emulator.js';
import type { LocalQueue } from '../emulators/resources.js';
import type { SqsEmulator } from '../emulators/sqs-emulator.js';
import { LOCAL_SECRETS_MAX_AGE_SECONDS, LOCAL_SECRETS_PARAMETER } from '../emulators/ssm-endpoint.js';
import { watchIngest } from './activity-taps.js';
import type { ProxyHandler } from './api-gateway.js';
import { type EventSourceMapping, type SqsHandler, startEventSourceMapping } from './event-source-mapping.js';

/** How the local runtime wires the functions: their environment, their handlers, their event sources. */

/**
 * The functions' environment, as serverless.yml gives it on AWS, pointed at the emulators; returns
 * the table names by key.
 */
export function setFunctionEnvironment(
  env: NodeJS.ProcessEnv,
  with_: {
    queues: readonly LocalQueue[];
    tables: Definitions['tables'];
    region: string;
    credentials: { accessKeyId: string; secretAccessKey: string };
    sqsEmulator: SqsEmulator;
    dynamoEmulator: DynamoEmulator;
    ssmEndpoint: string;
    log: (line: string) => void;
  },
): Record<string, string> {
  const { queues, region, credentials, sqsEmulator, dynamoEmulator, log } = with_;
  for (const queue of queues) env[queue.envVar] = queue.url;
  const reconcileQueue = queues.find((queue) => queue.key === 'reconcile');
  if (reconcileQueue) env[MAX_RECEIVE_COUNT_ENV_VAR] = String(reconcileQueue.dlq.maxReceiveCount);
  const tables: Record<string, string> = {};
  for (const table of with_.tables) {
    env[table.envVar] = table.name;
    tables[table.key] = table.name;
  }
  Object.assign(env, {
    AWS_REGION: region,
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    AWS_ENDPOINT_URL_SQS: sqsEmulator.endpoint,
    AWS_ENDPOINT_URL_DYNAMODB: dynamoEmulator.endpoint,
  });
  delete env.AWS_SESSION_TOKEN;
  delete env.AWS_PROFILE;
  delete env.ALERT_TOPIC_ARN;
  env.POWERTOOLS_SERVICE_NAME ??= 'crm-webhook-receiver';
  env.POWERTOOLS_METRICS_NAMESPACE ??= METRICS_NAMESPACE;
  env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  // One process runs the ingest and the SQS emulator: under a burst the emulator accepts one new
  // connection per turn of this event loop, so the ingest's wait measures the loop, not SQS. The
  // 2.5 s budget of Lambda would answer 503 to deliveries the emulator is about to take.
  env.ENQUEUE_TIMEOUT_MS ??= '20000';
  if (env.WEBHOOK_SECRETS_PARAMETER && env.WEBHOOK_SECRETS_PARAMETER !== LOCAL_SECRETS_PARAMETER)
    log(
      "WEBHOOK_SECRETS_PARAMETER is the runtime's own locally (DATA_DIR/ssm-parameters.json): set WEBHOOK_SECRET or WEBHOOK_SECRETS.",
    );
  // The secrets parameter through the same SSM call as on AWS, served from DATA_DIR (local/emulators/ssm-endpoint.ts).
  env.WEBHOOK_SECRETS_PARAMETER = LOCAL_SECRETS_PARAMETER;
  env.WEBHOOK_SECRETS_MAX_AGE_SECONDS = String(LOCAL_SECRETS_MAX_AGE_SECONDS);
  env.AWS_ENDPOINT_URL_SSM = with_.ssmEndpoint;
  return tables;
}

/**
 * Reads the functions' settings as they will at import (ENTITIES, WEBHOOK_SECRETS, HEADER_PREFIX, the watch's, ...),
 * with what the runtime sets itself (queue URLs, table and bus names) filled in: a ConfigError naming the
 * variable before the start takes DATA_DIR or restores its journal, not after.
 */
export function checkFunctionSettings(env: NodeJS.ProcessEnv, definitions: Definitions): void {
  const setAtStart = [
    ...definitions.queues.map((queue) => queue.envVar),
    ...definitions.tables.map((table) => table.envVar),
    'EVENT_BUS_NAME',
  ];
  const probe = { ...env, ...Object.fromEntries(setAtStart.map((name) => [name, 'set at start'])) };
  readIngestConfig(probe);
  readRowWorkerConfig(probe);
  readStateWorkerConfig(probe);
  readBusConfig(probe);
  readCrmConfig(probe);
  readWatchConfig(probe);
  // No SSM here (the functions' AWS endpoints are the emulators): the JSON goes in CRM_CREDENTIALS.
  if (probe.CRM_CREDENTIALS_PARAMETER?.trim())
    throw new ConfigError(
      'CRM_CREDENTIALS_PARAMETER is read from SSM on AWS only: locally, put the same JSON in CRM_CREDENTIALS',
      'CRM_CREDENTIALS_PARAMETER',
    );
}

/** Imports every function's handler (after the environment is set: they read it at import). */
export async function importHandlers(
  functions: readonly ServerlessFunction[],
  deliveries: DeliveryFeed,
): Promise<Map<string, unknown>> {
  const handlers = new Map<string, unknown>();
  await Promise.all(
    functions.map(async (fn) => {
      const url = new URL(`../../${fn.module}`, import.meta.url).href;
      const module = (await import(url)) as Record<string, unknown>;
      const handler = module[fn.exportName];
      if (typeof handler !== 'function')
        throw new Error(`${fn.module} does not export a function ${fn.exportName}`);
      handlers.set(
        fn.name,
        fn.httpRoutes.length > 0 ? watchIngest(handler as ProxyHandler, deliveries) : handler,
      );
    }),
  );
  return handlers;
}

/** One SQS event source mapping per `sqs` event of serverless.yml, polling its queue. */
export function startMappings(with_: {
  functions: readonly ServerlessFunction[];
  handlers: ReadonlyMap<string, unknown>;
  definitions: Definitions;
  queues: readonly LocalQueue[];
  sqs: SQSClient;
  region: string;
  log: (line: string) => void;
}): EventSourceMapping[] {
  const { functions, handlers, definitions, queues, sqs, region, log } = with_;
  return functions.flatMap((fn) =>
    fn.sqs.map((source) => {
      const definition = definitions.queues.find((queue) => queue.logicalId === source.queueLogicalId);
      const queue = queues.find((candidate) => candidate.key === definition?.key);
      if (!queue)
        throw new Error(
          `${fn.name} polls ${source.queueLogicalId}, which infra/resources.yml does not define`,
        );
      return startEventSourceMapping({
        client: sqs,
        functionName: fn.name,
        queueUrl: queue.url,
        queueArn: queue.arn,
        region,
        handler: handlers.get(fn.name) as SqsHandler,
        batchSize: source.batchSize,
        concurrency: source.maximumConcurrency,
        timeoutMs: fn.timeoutMs,
        onError: (error) => log(`[${fn.name}] ${error instanceof Error ? error.stack : String(error)}`),
      });
    }),
  );
}
