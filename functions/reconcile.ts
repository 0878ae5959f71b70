import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger } from '@aws-lambda-powertools/logger';
import { ChangeMessageVisibilityCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { readCrmConfig } from '../lib/config/crm.js';
import { readEntities } from '../lib/config/entities.js';
import { ConfigError, optionalEnv, requireEnv } from '../lib/config/env.js';
import { readReconcileConfig } from '../lib/config/reconcile.js';
import { currentCrmClient } from '../lib/crm/from-config.js';
import { type CrmClient, tenantEndpoints } from '../lib/crm/index.js';
import { createMetrics } from '../lib/function-metrics.js';
import { QUEUE_ENV_VARS, type QueueKey, SQS_CALL_BUDGET_MS } from '../lib/queue/port.js';
import { boundedSqsClientConfig } from '../lib/queue/sqs.js';
import { createSqsReconcileQueue } from '../lib/queue/sqs-reconcile.js';
import { createSnapshotSender } from '../lib/queue/sqs-snapshots.js';
import { createReconcileHandler } from '../lib/reconcile/run/reconcile-handler.js';
import { defaultClient } from '../lib/store/dynamo-calls.js';
import { createRecoveryStore, createStoredRows } from '../lib/store/index.js';
import { createSenderClock } from '../lib/store/sender-clock.js';
import { TABLE_ENV_VARS } from '../lib/store/tables.js';
import { abortSignalOf } from './abort-signal.js';
import { publicationFromEnv } from './publication.js';

/** Kept back from the invocation's remaining time: the last page's snapshots and the carry-on message. */
const HANDOVER_MS = 3_000;

const logger = new Logger();
const crmConfig = readCrmConfig();
/** Where each tenant's API is now, as its state last said: kept across the clients of rotated credentials. */
const endpoints = tenantEndpoints();
const entities = readEntities();
const config = readReconcileConfig();
// Each SQS call gives up within its budget, inside the hand-over time (a queue that never answers
// cannot hold the invocation past its timeout).
const sqs = new SQSClient(boundedSqsClientConfig(SQS_CALL_BUDGET_MS));
const queueUrls: Partial<Record<QueueKey, string>> = {};
for (const [key, name] of Object.entries(QUEUE_ENV_VARS)) {
  const url = optionalEnv(name);
  if (url !== undefined) queueUrls[key as QueueKey] = url;
}
const doc = defaultClient();
const stored = createStoredRows({ client: doc, table: requireEnv(TABLE_ENV_VARS.rows) });
// A run that names a webhook records its state on the webhook's recovery item (the gap's card shows it).
const recovery = createRecoveryStore(doc, requireEnv(TABLE_ENV_VARS.webhooks));
const send = createSnapshotSender({ client: sqs, queueUrls });
// The sender's clock from the live events' markers: what a skew of the CRM API's Date is measured against.
const senderAheadMs = createSenderClock(doc, requireEnv(TABLE_ENV_VARS.webhooks));
const reconcileQueue = createSqsReconcileQueue({ client: sqs, queueUrl: config.queueUrl });

// One client per process, so that tickets and the per-tenant limits outlive an invocation. Its time
// budget and call count are the current invocation's, found through the async context: the local
// runtime may run two invocations of this module at once.
const current = new AsyncLocalStorage<{ lambdaContext: Context; calls: number }>();
const timeLeftMs = () => (current.getStore()?.lambdaContext.getRemainingTimeInMillis() ?? 0) - HANDOVER_MS;
const currentCrm = crmConfig.enabled
  ? currentCrmClient(crmConfig, {
      // A tenant that moved is called where its state says (a 421 at its old host: read again, retry later).
      ...endpoints,
      timeLeftMs,
      signal: () => abortSignalOf(current.getStore()?.lambdaContext),
      // Every HTTP request (logins and retries too): the run's apiCalls.
      fetch: (input, init) => {
        const invocation = current.getStore();
        if (invocation !== undefined) invocation.calls++;
        return fetch(input, init);
      },
    })
  : undefined;
/** The CRM client for the credentials read now (lib/crm/from-config.ts). */
const crmClient = async (): Promise<CrmClient> => {
  if (currentCrm === undefined)
    throw new ConfigError(
      'CRM_API_URL is not set: reconciliation is off, gaps cannot be recovered',
      'CRM_API_URL',
    );
  return (await currentCrm()).crm;
};

const reconcile = createReconcileHandler({
  async runDeps() {
    return {
      crm: await crmClient(),
      stored,
      send,
      senderAheadMs,
      stores: (entity) => entities === undefined || entities(entity),
      apiCalls: () => current.getStore()?.calls ?? 0,
      timeLeftMs,
      now: () => new Date(),
      warn: (message) => logger.warn(message),
      maxDeletes: config.maxDeletes,
    };
  },
  carryOn: (request) => reconcileQueue.enqueue(request),
  async hide(receiptHandle, seconds) {
    await sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: config.queueUrl,
        ReceiptHandle: receiptHandle,
        VisibilityTimeout: seconds,
      }),
    );
  },
  publisher: publicationFromEnv()?.publisher,
  maxReceives: config.maxReceives,
  bounds: config.bounds,
  recovery,
  logger,
  metrics: createMetrics(),
});

/** SQS (reconcile FIFO queue, batch size 1) → the CRM's rows as snapshots on the rows' queues. */
export const handler = (event: SQSEvent, lambdaContext: Context): Promise<SQSBatchResponse> =>
  current.run({ lambdaContext, calls: 0 }, () => reconcile(event, lambdaContext));
