import { mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { intEnv } from '../../lib/config/env.js';
import { loadDefinitions } from '../definitions.js';
import { createAdminServer } from './admin-api.js';
import { createDeliveryFeed, createOutcomeCounter, tapMetrics } from './dashboard/activity.js';
import { createLocalSource } from './dashboard/local-source.js';
import { createDashboard } from './dashboard/server.js';
import { type DataDirLock, lockDataDir } from './data-dir-lock.js';
import { type DynamoEmulator, startDynamoEmulator } from './dynamo-emulator.js';
import { startLocalEventBus } from './event-bus.js';
import { importHandlers, setFunctionEnvironment, startMappings } from './function-wiring.js';
import { loadFunctions } from './functions.js';
import { createIngestServer } from './ingest-server.js';
import { describeQueued } from './queued-summary.js';
import { ensureQueues, ensureTables, type LocalQueue } from './resources.js';
import { type SqsEmulator, startSqsEmulator } from './sqs-emulator.js';
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
  /** Concurrent ingest connections served; beyond them a request is answered 503. Default 256. */
  maxConnections?: number;
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
  /** Milliseconds from the call to ready. */
  startupMs: number;
  stop(): Promise<void>;
}

const LOOPBACK = '127.0.0.1';
/** The SQS emulator's write-ahead journal under DATA_DIR (sqs-journal.ts). */
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

async function compose(options: LocalRuntimeOptions, startedWith: Started): Promise<LocalRuntime> {
  const { env, log, dataDir, region, started, sqsEmulator, dynamoEmulator, lock } = startedWith;
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  const sqs = new SQSClient({ endpoint: sqsEmulator.endpoint, region, credentials });
  const dynamodb = new DynamoDBClient({ endpoint: dynamoEmulator.endpoint, region, credentials });

  // The event bus (issue 14), first: an unusable subscriptions.yml stops the start before any log line.
  // The local bus, its PutEvents endpoint, and the functions' environment pointed at them.
  const eventBus = await startLocalEventBus({
    sqs,
    env,
    stage: options.stage ?? 'local',
    region,
    port: options.eventbridgePort ?? 0,
    ...(options.busBackoffMs !== undefined && { backoffMs: options.busBackoffMs }),
    log,
  }).catch((error: unknown) => {
    throw portError('EVENTBRIDGE_PORT', options.eventbridgePort ?? 0, error);
  });

  const definitions = loadDefinitions({ stage: options.stage ?? 'local' });
  const [queues] = await Promise.all([
    ensureQueues(sqs, definitions.queues, { visibilityTimeout: options.visibilityTimeout }),
    ensureTables(dynamodb, definitions.tables),
  ]);
  const recovered = sqsEmulator.recover();
  if (recovered.restored > 0)
    log(`restored ${recovered.restored} queued messages from ${join(dataDir, SQS_JOURNAL)}`);
  if (recovered.kept > 0)
    log(`kept ${recovered.kept} journaled messages of queues this stage does not define`);

  const tables = setFunctionEnvironment(env, {
    queues,
    tables: definitions.tables,
    region,
    credentials,
    sqsEmulator,
    dynamoEmulator,
    log,
  });
  const secret = ensureSecret(env, dataDir);

  const functions = loadFunctions();
  // The dashboard's taps: outcomes per minute from the functions' metrics, the ingest's answers.
  const outcomes = createOutcomeCounter();
  const untapMetrics = tapMetrics(outcomes);
  const deliveries = createDeliveryFeed();
  const handlers = await importHandlers(functions, deliveries);

  const { createDynamoStore } = await import('../../lib/store/index.js');
  const doc = DynamoDBDocumentClient.from(dynamodb);
  const store = createDynamoStore({
    client: doc,
    tables: { rows: tables.rows!, events: tables.events!, webhooks: tables.webhooks! },
    retentionDays: 30,
  });

  let ready = false;
  const ingest = createIngestServer({
    functions,
    handlers,
    region,
    log,
    maxBodyBytes: intEnv('MAX_BODY_BYTES', 1_048_576, env),
    maxConnections: options.maxConnections ?? 256,
  });
  const peek = (name: string, limit?: number) => sqsEmulator.peek(name, limit);
  const admin = createAdminServer({
    source: createLocalSource({
      store,
      sqs,
      doc,
      eventsTable: tables.events!,
      queues,
      peek,
      outcomes,
      deliveries,
      subscriptions: () => eventBus.bus.view(),
      env,
    }),
    queues,
    peek,
    isReady: () => ready,
    log,
    info: () => ({ urls, ports, dataDir, queues, tables }),
    dashboard: createDashboard(),
  });
  const host = options.host ?? LOOPBACK;
  // The ports first: a busy one stops the start before any worker polls.
  const listening = await Promise.allSettled([
    listen(ingest.server, options.port ?? 3000, host, 'PORT'),
    listen(admin, options.adminPort ?? 3001, LOOPBACK, 'ADMIN_PORT'),
  ]);
  const [ingestListening, adminListening] = listening;
  if (ingestListening.status === 'rejected' || adminListening.status === 'rejected') {
    if (ingest.server.listening) await ingest.close();
    if (admin.listening) await new Promise<void>((done) => admin.close(() => done()));
    untapMetrics();
    await eventBus.close();
    sqs.destroy();
    dynamodb.destroy();
    throw listening.find((result) => result.status === 'rejected')!.reason;
  }
  const ingestPort = ingestListening.value;
  const adminPort = adminListening.value;
  lock.update({ ingest: ingestPort, admin: adminPort });

  const mappings = startMappings({ functions, handlers, definitions, queues, sqs, region, log });

  const ports = {
    ingest: ingestPort,
    admin: adminPort,
    sqs: sqsEmulator.port,
    dynamodb: dynamoEmulator.port,
    eventbridge: eventBus.port,
  };
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
  ready = true;

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      ready = false;
      await ingest.close();
      await Promise.all(mappings.map((mapping) => mapping.stop()));
      await eventBus.close();
      const left = describeQueued(queues, (name) => sqsEmulator.peek(name).length);
      if (left) log(`${left} (${join(dataDir, SQS_JOURNAL)})`);
      admin.closeAllConnections();
      await new Promise<void>((done) => admin.close(() => done()));
      untapMetrics();
      sqs.destroy();
      dynamodb.destroy();
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
    queues,
    tables,
    secret,
    subscriptions: eventBus.subscriptions,
    startupMs: Math.round(performance.now() - started),
    stop,
  };
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
