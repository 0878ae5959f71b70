import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { readCrmConfig } from '../lib/config/crm.js';
import { optionalEnv, requireEnv } from '../lib/config/env.js';
import { readWatchConfig } from '../lib/config/watch.js';
import { createCrmClient, credentialsCover, crmCredentials, tenantEndpoints } from '../lib/crm/index.js';
import { METRICS_NAMESPACE } from '../lib/metrics.js';
import { runScheduledPolls } from '../lib/reconcile/poll/schedule.js';
import { SsmParameterProvider } from '../lib/secrets/ssm.js';
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
/** Where each tenant's API is now, as its state last said: kept across the clients of rotated credentials. */
const endpoints = tenantEndpoints();
const watch = readWatchConfig();
const table = requireEnv(TABLE_ENV_VARS.webhooks);
const queue = reconcileQueueFromEnv();
const publisher = publicationFromEnv()?.publisher;
const logger = new Logger();
const metrics = new Metrics({ namespace: METRICS_NAMESPACE });
const doc = defaultClient();
const receiverStore = createWebhookStore({ client: doc, table });
const ssm =
  crmConfig.enabled && crmConfig.credentials === undefined
    ? new SsmParameterProvider({
        region: requireEnv('AWS_REGION'),
        endpoint: optionalEnv('AWS_ENDPOINT_URL_SSM'),
      })
    : undefined;

let invocation: Context | undefined;
const timeLeftMs = () => (invocation?.getRemainingTimeInMillis() ?? 0) - RESERVE_MS;
/** One client per credentials read (SSM cached 5 minutes): its tickets and limits outlive an invocation. */
let client:
  | { json: string; crm: ReturnType<typeof createCrmClient>; covers: (context: string) => boolean }
  | undefined;

async function crmClient() {
  if (!crmConfig.enabled) return undefined;
  const credentials = await crmCredentials(crmConfig, async (name) => {
    const value = await ssm?.get(name, { maxAge: 300 });
    return typeof value === 'string' ? value : undefined;
  });
  const json = JSON.stringify(credentials);
  if (client?.json !== json) {
    const { apiUrl, maxInFlight, maxCallsPerSecond, timeoutMs } = crmConfig;
    const limits = { inFlight: maxInFlight, perSecond: maxCallsPerSecond, timeoutMs };
    client = {
      json,
      crm: createCrmClient({
        apiUrl,
        credentials,
        // A tenant that moved is called where its state says (a 421 at its old host: read again, polled next time).
        ...endpoints,
        limits,
        timeLeftMs,
        signal: () => abortSignalOf(invocation),
      }),
      // Contexts no credentials cover (a local throwaway context) are not polled.
      covers: (context) => credentialsCover(credentials, context),
    };
  }
  return client;
}

/**
 * Scheduled every minute: polls the receiver's webhooks in the CRM every RECONCILE_POLL_SECONDS,
 * enqueues reconciles of the windows it finds and sets disabled webhooks Active again
 * (lib/reconcile/poll/poll.ts). Without CRM_API_URL it does nothing: gaps cannot be recovered.
 */
export const handler = async (_event: unknown, lambdaContext: Context): Promise<void> => {
  invocation = lambdaContext;
  logger.addContext(lambdaContext);
  try {
    const crm = await crmClient();
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
