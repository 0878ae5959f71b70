/**
 * The event bus step of `npm start`: subscriptions.yml (or SUBSCRIPTIONS_FILE) evaluated by
 * the local bus, PutEvents served on a loopback port, and the functions' environment pointed at them
 * as serverless.yml points the workers at the stage's bus.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { SERVICE } from '../../infra/definitions.js';
import { publishEvents } from '../../infra/subscriptions.js';
import { BusError } from '../../lib/bus/errors.js';
import { neverMatching } from '../../lib/bus/never-matching.js';
import { publishDetailTypes } from '../../lib/bus/publish-filter.js';
import { loadSubscriptions } from '../../lib/bus/subscriptions.js';
import { optionalEnv } from '../../lib/config/env.js';
import { startEventBridgeEndpoint } from '../emulators/eventbridge-endpoint.js';
import { StartupError } from '../startup-error.js';
import { startLocalBus } from './local-bus.js';
import type { LocalBus } from './types.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The local bus's write-ahead journal under DATA_DIR (journaled-queues.ts). */
export const BUS_JOURNAL = 'bus-journal.ndjson';

export interface LocalEventBusOptions {
  sqs: SQSClient;
  /** SUBSCRIPTIONS_FILE is read here; EVENT_BUS_NAME, AWS_ENDPOINT_URL_EVENTBRIDGE and PUBLISH_EVENTS are set. */
  env: NodeJS.ProcessEnv;
  stage: string;
  region: string;
  /** Where the bus journals what it has not delivered yet (`bus-journal.ndjson`). */
  dataDir: string;
  /** PutEvents port on 127.0.0.1; 0 picks a free one. */
  port: number;
  /** The bus's first retry step (ms), LOCAL_BUS_BACKOFF_MS; default 1000. */
  backoffMs?: number;
  log: (line: string) => void;
}

export interface LocalEventBus {
  bus: LocalBus;
  busName: string;
  /** How many subscriptions the bus evaluates. */
  subscriptions: number;
  /** The PutEvents endpoint, AWS_ENDPOINT_URL_EVENTBRIDGE. */
  endpoint: string;
  port: number;
  /** Stops taking events, then stops the bus (what is not delivered yet stays journaled). */
  close(): Promise<void>;
}

/**
 * Loads subscriptions.yml (or SUBSCRIPTIONS_FILE), starts the local bus and its PutEvents endpoint,
 * prints the bus's notices and sets the functions' environment: EVENT_BUS_NAME (`<service>-<stage>`,
 * as on AWS), AWS_ENDPOINT_URL_EVENTBRIDGE, PUBLISH_EVENTS unless it is set (true when there are
 * subscriptions: the rule of serverless.yml) and PUBLISH_DETAIL_TYPES (as serverless.yml sets it).
 */
export async function startLocalEventBus(options: LocalEventBusOptions): Promise<LocalEventBus> {
  const { env, log } = options;
  const busName = `${SERVICE}-${options.stage}`;
  const { subscriptions, bus } = await startBus(options);
  const server = await startEventBridgeEndpoint({ bus, busName, port: options.port, log }).catch(
    async (error: unknown) => {
      await bus.close();
      throw error;
    },
  );
  for (const warning of neverMatching(subscriptions)) log(`warning: ${warning}`);
  for (const notice of bus.notices) log(notice);
  env.EVENT_BUS_NAME = busName;
  env.AWS_ENDPOINT_URL_EVENTBRIDGE = server.endpoint;
  const forced = optionalEnv('PUBLISH_EVENTS', env);
  env.PUBLISH_EVENTS = forced ?? publishEvents(subscriptions, undefined);
  env.PUBLISH_DETAIL_TYPES = publishDetailTypes(
    subscriptions.map((subscription) => subscription.pattern),
    forced,
  );
  return {
    bus,
    busName,
    subscriptions: subscriptions.length,
    endpoint: server.endpoint,
    port: server.port,
    async close() {
      await server.close();
      await bus.close();
    },
  };
}

/**
 * The bus over the subscriptions of this run, read as `npm run package` reads them but with http://
 * targets allowed on loopback. An invalid file, a pattern the local matcher cannot evaluate or an
 * unset `auth.env` variable is a one-line StartupError.
 */
async function startBus({ env, sqs, stage, region, dataDir, backoffMs = 1000 }: LocalEventBusOptions) {
  try {
    const subscriptions = loadSubscriptions({ root: ROOT, env, mode: 'local' });
    const backoff = { baseMs: backoffMs, maxMs: 60_000 };
    const journalPath = join(dataDir, BUS_JOURNAL);
    return {
      subscriptions,
      bus: await startLocalBus({ subscriptions, journalPath, sqs, stage, region, env, backoff }),
    };
  } catch (error) {
    if (error instanceof BusError) throw new StartupError(error.message);
    throw error;
  }
}
