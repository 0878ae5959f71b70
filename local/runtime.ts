import { mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDeliveryFeed, createOutcomeCounter } from '../dashboard/activity.js';
import { createDashboard } from '../dashboard/server.js';
import { loadDefinitions } from '../infra/definitions.js';
import { loadFunctions } from '../infra/functions.js';
import { intEnv } from '../lib/config/env.js';
import { ROW_SET_INDEX } from '../lib/store/keys.js';
import { createAdminServer } from './admin/admin-api.js';
import { createLocalSource } from './admin/dashboard-source.js';
import { eraseLocal } from './admin/erase.js';
import { localReconciliation } from './admin/reconciliation.js';
import { localTenants } from './admin/tenants.js';
import { type LocalEventBus, startLocalEventBus } from './bus/start-bus.js';
import { type DataDirLock, lockDataDir } from './data-dir-lock.js';
import { type DynamoEmulator, startDynamoEmulator } from './emulators/dynamo-emulator.js';
import { ensureQueues, ensureTables, hasIndex, type LocalQueue } from './emulators/resources.js';
import { type SqsEmulator, startSqsEmulator } from './emulators/sqs-emulator.js';
import { startLocalSsm } from './emulators/ssm-endpoint.js';
import { LOCAL_CREDENTIALS } from './http/port-guard.js';
import { tapMetrics } from './lambda/activity-taps.js';
import {
  checkFunctionSettings,
  importHandlers,
  setFunctionEnvironment,
  startMappings,
} from './lambda/function-wiring.js';
import { createIngestServer } from './lambda/ingest-server.js';
import { loadSchedules, startSchedules } from './lambda/schedules.js';
import { describeQueued } from './queued-summary.js';
import { StartupError } from './startup-error.js';
import { ensureSecret, type LocalSecret } from './webhook-secret.js';

export interface LocalRuntimeOptions {
  /** Where dynalite keeps the tables and the runtime its SQS journal and generated secret. Default `.data`. */
  dataDir?: string;
  /** Interface of the ingest; default 127.0.0.1. The admin API and the emulators always bind 127.0.0.1. */
  host?: string;
  /** Ingest port; default 3000, 0 for any free port. */
  port?: number;
  /** Admin API port; default 3001, 0 for any free port. */
  adminPort?: number;
  /** Emulator ports; default 0 (any free port). */
  sqsPort?: number;
  dynamodbPort?: number;
  /** The local EventBridge's PutEvents port; default 0 (any free port). */
  eventbridgePort?: number;
  stage?: string;
  region?: string;
  /** Ingest connections open at once (see createIngestServer). Default 256. */
  maxConnections?: number;
  /** How long an ingest connection may take to send a request's headers, in ms; default 5000. */
  headersTimeoutMs?: number;
  /** Overrides every queue's VisibilityTimeout (seconds), for quick retries in experiments and tests. */
  visibilityTimeout?: number;
  /** The local bus's first retry step in ms (later ones double, up to 60 s); default 1000. */
  busBackoffMs?: number;
  /** The environment the functions read; default `process.env`, which is updated in place. */
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

export interface LocalRuntime {
  ports: { ingest: number; admin: number; sqs: number; dynamodb: number; eventbridge: number };
  urls: {
    webhook: string;
    ingest: string;
    admin: string;
    dashboard: string;
    sqs: string;
    dynamodb: string;
    eventbridge: string;
  };
  /** How many subscriptions of subscriptions.yml (or SUBSCRIPTIONS_FILE) the local bus evaluates. */
  subscriptions: number;
  dataDir: string;
  queues: readonly LocalQueue[];
  tables: Record<string, string>;
  /** How the webhook secret was set (see webhook-secret.ts). */
  secret: LocalSecret;
  /** Whether gaps can be recovered (CRM_API_URL), and the line that says so. */
  reconciliation: { enabled: boolean; note: string };
  /** Milliseconds from the call to ready. */
  startupMs: number;
  stop(): Promise<void>;
}

const LOOPBACK = '127.0.0.1';
/** The SQS emulator's write-ahead journal under DATA_DIR (emulators/sqs-journal.ts). */
const SQS_JOURNAL = 'sqs-journal.ndjson';

/**
 * The whole receiver on one machine: local-aws-sqs and dynalite in-process, the queues and tables of
 * infra/resources.yml, the functions of serverless.yml with their exact code (the ingest behind an
 * API Gateway HTTP API emulation, the workers behind SQS event source mappings) and the admin API.
 *
 * The functions read their configuration from the environment when their module loads, so this sets
 * the environment first and imports them afterwards; one runtime per process.
 */
export async function startLocalRuntime(options: LocalRuntimeOptions = {}): Promise<LocalRuntime> {
  const started = performance.now();
  const env = options.env ?? process.env;
  const log = options.log ?? ((line: string) => console.log(line));
  const dataDir = resolve(options.dataDir ?? '.data');
  const region = options.region ?? env.AWS_REGION ?? 'us-east-1';
  checkFunctionSettings(env, loadDefinitions({ stage: options.stage ?? 'local' }));
  mkdirSync(dataDir, { recursive: true });
  const lock = lockDataDir(dataDir);

  const [sqsStarted, dynamoStarted] = await Promise.allSettled([
    startSqsEmulator({
      host: LOOPBACK,
      port: options.sqsPort ?? 0,
      region,
      journalPath: join(dataDir, SQS_JOURNAL),
    }).catch((error: unknown) => {
      throw portError('SQS_PORT', options.sqsPort ?? 0, error);
    }),
    startDynamoEmulator({
      host: LOOPBACK,
      port: options.dynamodbPort ?? 0,
      path: join(dataDir, 'dynamodb'),
    }).catch((error: unknown) => {
      throw portError('DYNAMODB_PORT', options.dynamodbPort ?? 0, error);
    }),
  ]);
  if (sqsStarted.status === 'rejected' || dynamoStarted.status === 'rejected') {
    if (sqsStarted.status === 'fulfilled') await sqsStarted.value.close();
    if (dynamoStarted.status === 'fulfilled') await dynamoStarted.value.close();
    lock.release();
    throw sqsStarted.status === 'rejected'
      ? sqsStarted.reason
      : (dynamoStarted as PromiseRejectedResult).reason;
  }
  const sqsEmulator = sqsStarted.value;
  const dynamoEmulator = dynamoStarted.value;
  try {
    return await compose(options, { env, log, dataDir, region, started, sqsEmulator, dynamoEmulator, lock });
  } catch (error) {
    await Promise.allSettled([sqsEmulator.close(), dynamoEmulator.close()]);
    lock.release();
    throw error;
  }
}

interface Started {
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  dataDir: string;
  region: string;
  started: number;
  sqsEmulator: SqsEmulator;
  dynamoEmulator: DynamoEmulator;
  lock: DataDirLock;
}

/** What compose has started so far, undone newest first when a later step fails. */
type Undo = () => unknown;

/**
 * The runtime on top of the emulators, step by step: the event bus, the queues and tables, the
 * functions, the two HTTP servers, their ports, the event source mappings. A step that fails undoes
 * what the earlier ones started.
 */
async function compose(options: LocalRuntimeOptions, startedWith: Started): Promise<LocalRuntime> {
  const { env, log, dataDir, region, started, sqsEmulator, dynamoEmulator, lock } = startedWith;
  const undo: Undo[] = [];
  try {
    const clients = localClients(sqsEmulator, dynamoEmulator, region);
    undo.push(clients.destroy);
    // The event bus first: an unusable subscriptions.yml stops the start before any log line.
    const eventBus = await startLocalEventBus({
      sqs: clients.sqs,
      env,
      stage: options.stage ?? 'local',
      region,
      dataDir,
      port: options.eventbridgePort ?? 0,
      ...(options.busBackoffMs !== undefined && { backoffMs: options.busBackoffMs }),
      log,
    }).catch((error: unknown) => {
      throw portError('EVENTBRIDGE_PORT', options.eventbridgePort ?? 0, error);
    });
    undo.push(eventBus.close);
    const ssm = await startLocalSsm(dataDir, () => env.WEBHOOK_SECRETS?.trim() || undefined);
    undo.push(ssm.close);
    const resources = await createResources(options, startedWith, clients, ssm.endpoint);
    const app = await createServers(options, startedWith, clients, resources, eventBus);
    undo.push(app.untapMetrics);
    // The ports before any worker polls: a busy one stops the start.
    const [ingestPort, adminPort] = await listenBoth(app, options, undo);
    lock.update({ ingest: ingestPort, admin: adminPort });
    // serverless.yml's `schedule` events (local/lambda/schedules.ts).
    const schedules = startSchedules({ schedules: loadSchedules(), handlers: app.handlers, region, log });
    undo.push(schedules.stop);
    const mappings = startMappings({ ...app, ...resources, sqs: clients.sqs, region, log });

    const ports = {
      ingest: ingestPort,
      admin: adminPort,
      sqs: sqsEmulator.port,
      dynamodb: dynamoEmulator.port,
      eventbridge: eventBus.port,
    };
    const host = options.host ?? LOOPBACK;
    const urlHost = host === '0.0.0.0' || host === '::' ? LOOPBACK : host;
    const urls = {
      webhook: `http://${urlHost}:${ingestPort}/webhook`,
      ingest: `http://${urlHost}:${ingestPort}`,
      admin: `http://${LOOPBACK}:${adminPort}`,
      dashboard: `http://${LOOPBACK}:${adminPort}/`,
      sqs: sqsEmulator.endpoint,
      dynamodb: dynamoEmulator.endpoint,
      eventbridge: eventBus.endpoint,
    };
    app.state.info = { urls, ports };
    app.state.ready = true;

    let stopping: Promise<void> | undefined;
    const stop = () => {
      stopping ??= (async () => {
        app.state.ready = false;
        await app.ingest.close();
        await Promise.all([...mappings.map((mapping) => mapping.stop()), schedules.stop()]);
        app.tenants.stop();
        await eventBus.close();
        await ssm.close();
        const left = describeQueued(resources.queues, (name) => sqsEmulator.peek(name).length);
        if (left) log(`${left} (${join(dataDir, SQS_JOURNAL)})`);
        app.admin.closeAllConnections();
        await new Promise<void>((done) => app.admin.close(() => done()));
        app.untapMetrics();
        clients.destroy();
        await sqsEmulator.close();
        await dynamoEmulator.close();
        lock.release();
      })();
      return stopping;
    };

    return {
      ports,
      urls,
      dataDir,
      queues: resources.queues,
      tables: resources.tables,
      secret: resources.secret,
      reconciliation: { enabled: app.reconciliation.enabled, note: app.reconciliation.note },
      subscriptions: eventBus.subscriptions,
      startupMs: Math.round(performance.now() - started),
      stop,
    };
  } catch (error) {
    for (const step of undo.reverse())
      await Promise.resolve()
        .then(step)
        .catch(() => undefined);
    throw error;
  }
}

interface Clients {
  sqs: SQSClient;
  dynamodb: DynamoDBClient;
  credentials: { accessKeyId: string; secretAccessKey: string };
  destroy(): void;
}

/** The runtime's own SDK clients, pointed at the emulators. */
function localClients(sqsEmulator: SqsEmulator, dynamoEmulator: DynamoEmulator, region: string): Clients {
  const credentials = { ...LOCAL_CREDENTIALS };
  const sqs = new SQSClient({ endpoint: sqsEmulator.endpoint, region, credentials });
  const dynamodb = new DynamoDBClient({ endpoint: dynamoEmulator.endpoint, region, credentials });
  return {
    sqs,
    dynamodb,
    credentials,
    destroy() {
      sqs.destroy();
      dynamodb.destroy();
    },
  };
}

/**
 * The queues and tables of infra/resources.yml, the journaled messages put back, and the functions'
 * environment pointed at all of it (the webhook secret included).
 */
async function createResources(
  options: LocalRuntimeOptions,
  startedWith: Started,
  clients: Clients,
  ssmEndpoint: string,
) {
  const { env, log, dataDir, region, sqsEmulator, dynamoEmulator } = startedWith;
  const definitions = loadDefinitions({ stage: options.stage ?? 'local' });
  const [queues] = await Promise.all([
    ensureQueues(clients.sqs, definitions.queues, { visibilityTimeout: options.visibilityTimeout }),
    ensureTables(clients.dynamodb, definitions.tables),
  ]);
  const rows = definitions.tables.find((table) => table.key === 'rows')?.name;
  if (rows !== undefined && !(await hasIndex(clients.dynamodb, rows, ROW_SET_INDEX)))
    log(
      `DATA_DIR ${dataDir} holds a rows table from before its ${ROW_SET_INDEX} index, which dynalite cannot add: reconciliation cannot find rows deleted in the CRM here; to have it, start on a fresh DATA_DIR (move ${dataDir} aside or set DATA_DIR to a new directory)`,
    );
  const recovered = sqsEmulator.recover();
  if (recovered.restored > 0)
    log(
      `restored ${recovered.restored} queued message${recovered.restored === 1 ? '' : 's'} from ${join(dataDir, SQS_JOURNAL)}`,
    );
  if (recovered.kept > 0)
    log(
      `kept ${recovered.kept} journaled message${recovered.kept === 1 ? '' : 's'} of queues this version does not define`,
    );
  const tables = setFunctionEnvironment(env, {
    queues,
    tables: definitions.tables,
    region,
    credentials: clients.credentials,
    sqsEmulator,
    dynamoEmulator,
    ssmEndpoint,
    log,
  });
  return { definitions, queues, tables, secret: ensureSecret(env, dataDir) };
}

/**
 * The functions imported with their environment set, and the two HTTP servers in front of them: the
 * API Gateway emulation (the ingest) and the admin API with the dashboard. Not listening yet.
 */
async function createServers(
  options: LocalRuntimeOptions,
  { env, log, region, dataDir, sqsEmulator }: Started,
  clients: Clients,
  { queues, tables }: Awaited<ReturnType<typeof createResources>>,
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

/** Both servers listening (the ingest on `host`, the admin API on loopback); their ports. */
async function listenBoth(
  { ingest, admin }: Awaited<ReturnType<typeof createServers>>,
  options: LocalRuntimeOptions,
  undo: Undo[],
): Promise<[number, number]> {
  const listening = await Promise.allSettled([
    listen(ingest.server, options.port ?? 3000, options.host ?? LOOPBACK, 'PORT'),
    listen(admin, options.adminPort ?? 3001, LOOPBACK, 'ADMIN_PORT'),
  ]);
  if (ingest.server.listening) undo.push(() => ingest.close());
  if (admin.listening) undo.push(() => new Promise<void>((done) => admin.close(() => done())));
  const [ingestListening, adminListening] = listening;
  if (ingestListening.status === 'rejected') throw ingestListening.reason;
  if (adminListening.status === 'rejected') throw adminListening.reason;
  return [ingestListening.value, adminListening.value];
}

function listen(server: Server, port: number, host: string, variable: string): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const failed = (error: Error) => reject(portError(variable, port, error));
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolvePort((server.address() as AddressInfo).port);
    });
  });
}

/** A busy or forbidden port as one line naming the variable to change; other errors unchanged. */
function portError(variable: string, port: number, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE')
    return new StartupError(
      `port ${port} is in use by another process: set ${variable} to a free port (0 picks one)`,
    );
  if (code === 'EACCES')
    return new StartupError(
      `port ${port} needs privileges: set ${variable} to a port above 1023 (0 picks one)`,
    );
  return error;
}

/** CPU milliseconds (user + system) this process has used so far, all its threads together. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return Math.round((user + system) / 1000);
}
