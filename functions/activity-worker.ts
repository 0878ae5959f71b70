import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { readRowWorkerConfig } from '../lib/config/workers.js';
import { hooks } from '../lib/hooks.js';
import { createDynamoStore } from '../lib/store/index.js';
import { createRowWorker } from '../lib/workers/index.js';

const config = readRowWorkerConfig();
const logger = new Logger();
const metrics = new Metrics({ namespace: 'CrmWebhookReceiver' });
const worker = createRowWorker({
  entity: 'activity',
  store: createDynamoStore({ tables: config.tables, retentionDays: config.retentionDays }),
  hooks,
  ignoreAssociateIds: config.ignoreAssociateIds,
  logger,
  metrics,
});

/** SQS (activity FIFO queue) → rows and events tables, partial batch failures per message group. */
export const handler = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
  worker(event, context);
