import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { readCrmConfig } from '../lib/config/crm.js';
import { requireEnv } from '../lib/config/env.js';
import { readWatchConfig } from '../lib/config/watch.js';
import { tenantEndpoints } from '../lib/crm/endpoints.js';
import { currentCrmClient } from '../lib/crm/from-config.js';
import { createMetrics } from '../lib/function-metrics.js';
import { runScheduledPolls } from '../lib/reconcile/poll/schedule.js';
import { defaultClient } from '../lib/store/dynamo-calls.js';
import { createRecoveryStore, createWebhookStore } from '../lib/store/index.js';
import { TABLE_ENV_VARS } from '../lib/store/tables.js';
import { createWatchStore } from '../lib/store/watch-memory.js';
import { abortSignalOf } from './abort-signal.js';
import { publicationFromEnv } from './publication.js';
import { reconcileQueueFromEnv } from './reconcile-queue.js';

/** Kept off the invocation's remaining time: the last writes and the metrics flush. */
const RESERVE_MS = 5_000;

const crmConfig = readCrmConfig();
const watch = readWatchConfig();
const table = requireEnv(TABLE_ENV_VARS.webhooks);
const queue = reconcileQueueFromEnv();
const publisher = publicationFromEnv()?.publisher;
const logger = new Logger();
const metrics = createMetrics();
const doc = defaultClient();
const receiverStore = createWebhookStore({ client: doc, table });
let invocation: Context | undefined;
const timeLeftMs = () => (invocation?.getRemainingTimeInMillis() ?? 0) - RESERVE_MS;
/** One client per credentials read (lib/crm/from-config.ts): its tickets and limits outlive an invocation. */
/** Where each tenant's API is now, as its state last said: kept across the clients of rotated credentials. */
const endpoints = tenantEndpoints();
const crmClient = crmConfig.enabled
  ? currentCrmClient(crmConfig, {
      // A tenant that moved is called where its state says (a 421 at its old host: read again, polled next time).
      ...endpoints,
      timeLeftMs,
      signal: () => abortSignalOf(invocation),
    })
  : undefined;

/**
 * Scheduled every minute: polls the receiver's webhooks in the CRM every RECONCILE_POLL_SECONDS,
 * enqueues reconciles of the windows it finds and sets disabled webhooks Active again
 * (lib/reconcile/poll/poll.ts). Without CRM_API_URL it does nothing: gaps cannot be recovered.
 */
export const handler = async (_event: unknown, lambdaContext: Context): Promise<void> => {
  invocation = lambdaContext;
  logger.addContext(lambdaContext);
  try {
    const crm = await crmClient?.();
    if (crm === undefined || queue === undefined) {
      logger.info('reconciliation is off (no CRM_API_URL): the CRM is not polled');
      return;
    }
    const reports = await runScheduledPolls(
      {
        crm: crm.crm,
        covers: crm.covers,
        store: createWatchStore(doc, table),
        lastAccepted: (ctx, name) => receiverStore.getLastAccepted(ctx, name),
        queue,
        publisher,
        recovery: createRecoveryStore(doc, table),
        config: watch,
        logger,
        metrics,
      },
      { timeLeftMs, signal: abortSignalOf(lambdaContext) },
    );
    for (const report of reports.filter((polled) => polled.polled))
      logger.info('webhooks polled', { ...report });
  } finally {
    logger.resetKeys();
    if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
  }
};
