import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadDefinitions } from '../infra/definitions.js';
import { startLocalEventBus } from './bus/start-bus.js';
import { type DataDirLock, lockDataDir } from './data-dir-lock.js';
import { type DynamoEmulator, startDynamoEmulator } from './emulators/dynamo-emulator.js';
import type { LocalQueue } from './emulators/resources.js';
import { type SqsEmulator, startSqsEmulator } from './emulators/sqs-emulator.js';
import { startLocalSsm } from './emulators/ssm-endpoint.js';
import { checkFunctionSettings, startMappings } from './lambda/function-wiring.js';
import { loadSchedules, startSchedules } from './lambda/schedules.js';
import { LOOPBACK, listenBoth, portError } from './listen.js';
import { createResources, localClients, SQS_JOURNAL } from './provision.js';
import { describeQueued } from './queued-summary.js';
import { createServers } from './servers.js';
import type { LocalSecret } from './webhook-secret.js';

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

export interface Started {
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
