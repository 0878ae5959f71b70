import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDeliveryFeed, createOutcomeCounter } from '../dashboard/activity.js';
import { createDashboard } from '../dashboard/server.js';
import { loadFunctions } from '../infra/functions.js';
import { intEnv } from '../lib/config/env.js';
import { createAdminServer } from './admin/admin-api.js';
import { createLocalSource } from './admin/dashboard-source.js';
import { eraseLocal } from './admin/erase.js';
import { localReconciliation } from './admin/reconciliation.js';
import { localTenants } from './admin/tenants.js';
import type { LocalEventBus } from './bus/start-bus.js';
import { tapMetrics } from './lambda/activity-taps.js';
import { importHandlers } from './lambda/function-wiring.js';
import { createIngestServer } from './lambda/ingest-server.js';
import type { Clients, Resources } from './provision.js';
import type { LocalRuntime, LocalRuntimeOptions, Started } from './runtime.js';

/**
 * The functions imported with their environment set, and the two HTTP servers in front of them: the
 * API Gateway emulation (the ingest) and the admin API with the dashboard. Not listening yet.
 */
export async function createServers(
  options: LocalRuntimeOptions,
  { env, log, region, dataDir, sqsEmulator }: Started,
  clients: Clients,
  { queues, tables }: Resources,
  eventBus: LocalEventBus,
) {
  const functions = loadFunctions();
  // The dashboard's taps: outcomes per minute from the functions' metrics, the ingest's answers.
  const outcomes = createOutcomeCounter();
  const untapMetrics = tapMetrics(outcomes);
  const deliveries = createDeliveryFeed();
  const handlers = await importHandlers(functions, deliveries);

  const { createDynamoStore } = await import('../lib/store/index.js');
  const doc = DynamoDBDocumentClient.from(clients.dynamodb);
  const store = createDynamoStore({
    client: doc,
    tables: { rows: tables.rows!, events: tables.events!, webhooks: tables.webhooks! },
    retentionDays: 30,
  });
  const ingest = createIngestServer({
    functions,
    handlers,
    region,
    log,
    maxBodyBytes: intEnv('MAX_BODY_BYTES', 1_048_576, env),
    maxConnections: options.maxConnections ?? 256,
    headersTimeoutMs: options.headersTimeoutMs ?? 5000,
  });
  const peek = (name: string, limit?: number) => sqsEmulator.peek(name, limit);
  /** Whether the runtime is ready, and its URLs and ports once listening (for GET /health and /info). */
  const state: { ready: boolean; info?: { urls: LocalRuntime['urls']; ports: LocalRuntime['ports'] } } = {
    ready: false,
  };
  const reconciliation = localReconciliation(env, queues, clients.sqs);
  const erasure = {
    store,
    sqs: clients.sqs,
    queues,
    env,
    doc,
    webhooksTable: tables.webhooks!,
    bus: eventBus.bus,
  };
  const tenants = localTenants({
    eraseTenant: (context) => eraseLocal(erasure, { context }),
    env,
    doc,
    webhooksTable: tables.webhooks!,
    region,
    credentials: clients.credentials,
    activity: store,
    targetUrl: () => state.info?.urls.webhook ?? '',
    log,
  });
  const admin = createAdminServer({
    source: createLocalSource({
      store,
      sqs: clients.sqs,
      doc,
      eventsTable: tables.events!,
      webhooksTable: tables.webhooks!,
      queues,
      peek,
      outcomes,
      deliveries,
      subscriptions: () => eventBus.bus.view(),
      env,
      reconciliation,
      erasure,
    }),
    queues,
    peek,
    isReady: () => state.ready,
    log,
    // cpuMs: what this process has spent, every thread (the emulators' too): bench load's CPU per event.
    info: () => ({ ...state.info, dataDir, queues, tables, cpuMs: cpuMs() }),
    dashboard: createDashboard(),
    tenants,
  });
  return { functions, handlers, ingest, admin, untapMetrics, state, reconciliation, tenants };
}

/** CPU milliseconds (user + system) this process has used so far, all its threads together. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return Math.round((user + system) / 1000);
}
