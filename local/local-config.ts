import { StartupError } from './startup-error.js';

/** The local runtime's own settings, read from the environment once. */
export interface LocalConfig {
  dataDir: string;
  host: string;
  port: number;
  adminPort: number;
  sqsPort: number;
  dynamodbPort: number;
  eventbridgePort: number;
  visibilityTimeout: number | undefined;
  maxConnections: number;
  /** How long an ingest connection may take to send a request's headers (ms). */
  headersTimeoutMs: number;
  /** The local bus's first retry step (ms); later ones double, up to 60 s. */
  busBackoffMs: number;
}

/**
 * Reads PORT, HOST, ADMIN_PORT, DATA_DIR, SQS_PORT, DYNAMODB_PORT, EVENTBRIDGE_PORT, LOCAL_VISIBILITY_TIMEOUT,
 * LOCAL_MAX_CONNECTIONS, LOCAL_HEADERS_TIMEOUT_MS and LOCAL_BUS_BACKOFF_MS. A malformed value throws a StartupError naming the variable, where it came
 * from (`origin` says, for example `in .env`) and what is accepted.
 */
export function readLocalConfig(env: NodeJS.ProcessEnv, origin: (name: string) => string): LocalConfig {
  const integer = (name: string, fallback: number, min: number, max: number, accepted: string) => {
    const raw = env[name]?.trim();
    if (!raw) return fallback;
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || value < min || value > max) {
      throw new StartupError(`${name}=${JSON.stringify(raw)} ${origin(name)} is not accepted: ${accepted}`);
    }
    return value;
  };
  const port = (name: string, fallback: number) =>
    integer(name, fallback, 0, 65_535, 'a port number from 0 to 65535 (0 picks a free one)');
  return {
    dataDir: env.DATA_DIR?.trim() || '.data',
    host: env.HOST?.trim() || '127.0.0.1',
    port: port('PORT', 3000),
    adminPort: port('ADMIN_PORT', 3001),
    sqsPort: port('SQS_PORT', 0),
    dynamodbPort: port('DYNAMODB_PORT', 0),
    eventbridgePort: port('EVENTBRIDGE_PORT', 0),
    visibilityTimeout: env.LOCAL_VISIBILITY_TIMEOUT?.trim()
      ? integer('LOCAL_VISIBILITY_TIMEOUT', 0, 0, 43_200, 'whole seconds from 0 to 43200 (the SQS limit)')
      : undefined,
    maxConnections: integer('LOCAL_MAX_CONNECTIONS', 256, 1, 65_535, 'a whole number from 1 to 65535'),
    headersTimeoutMs: integer(
      'LOCAL_HEADERS_TIMEOUT_MS',
      5000,
      100,
      60_000,
      'whole milliseconds from 100 to 60000',
    ),
    busBackoffMs: integer('LOCAL_BUS_BACKOFF_MS', 1000, 0, 60_000, 'whole milliseconds from 0 to 60000'),
  };
}
