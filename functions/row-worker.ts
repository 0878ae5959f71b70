import { Logger } from '@aws-lambda-powertools/logger';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { readRowWorkerConfig } from '../lib/config/workers.js';
import { createMetrics } from '../lib/function-metrics.js';
import { hooks } from '../lib/hooks.js';
import { createDynamoStore } from '../lib/store/dynamo.js';
import { createEntitiesWorker, createRowWorker } from '../lib/workers/index.js';
import { publicationFromEnv } from './publication.js';

/**
 * The composition of a row worker (of the contact, activity or entities queue), done once per Lambda
 * module: configuration from the environment, the DynamoDB store, the hooks, the bus publication (when
 * on), Powertools logger and metrics.
 */
export function rowWorkerHandler(
  queue: 'contact' | 'activity' | 'entities',
): (event: SQSEvent, lambdaContext: Context) => Promise<SQSBatchResponse> {
  const config = readRowWorkerConfig();
  const deps = {
    store: createDynamoStore({ tables: config.tables, retentionDays: config.retentionDays }),
    hooks,
    ignoreAssociateIds: config.ignoreAssociateIds,
    erasesOnDelete: config.erasesOnDelete,
    publication: publicationFromEnv(),
    logger: new Logger(),
    metrics: createMetrics(),
  };
  const worker =
    queue === 'entities' ? createEntitiesWorker(deps) : createRowWorker({ ...deps, entity: queue });
  return (event, lambdaContext) => worker(event, lambdaContext);
}
