import { Logger } from '@aws-lambda-powertools/logger';
import { SNSClient } from '@aws-sdk/client-sns';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { readStateWorkerConfig } from '../lib/config/workers.js';
import { createMetrics } from '../lib/function-metrics.js';
import { hooks } from '../lib/hooks.js';
import { createWebhookStore } from '../lib/store/dynamo-webhooks.js';
import { createSnsAlertPublisher, createStateWorker } from '../lib/workers/index.js';
import { publicationFromEnv } from './publication.js';
import { reconcileQueueFromEnv } from './reconcile-queue.js';

const config = readStateWorkerConfig();
const logger = new Logger();
const metrics = createMetrics();
const worker = createStateWorker({
  store: createWebhookStore({ table: config.webhooksTable }),
  hooks,
  alerts:
    config.alertTopicArn === undefined
      ? undefined
      : createSnsAlertPublisher({ client: new SNSClient({}), topicArn: config.alertTopicArn }),
  publication: publicationFromEnv(),
  reconcile: reconcileQueueFromEnv(),
  logger,
  metrics,
});

/**
 * SQS (webhook-state FIFO queue) → webhooks table; alerts when a webhook enters TooManyErrors; a gap
 * opened or closed → the reconcile queue (with CRM_API_URL) and `receiver.gap.*` on the bus.
 */
export const handler = async (event: SQSEvent, lambdaContext: Context): Promise<SQSBatchResponse> =>
  worker(event, lambdaContext);
