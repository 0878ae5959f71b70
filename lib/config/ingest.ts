import * as z from 'zod/mini';
import type { SecretConfig } from '../ingest/signature.js';
import { QUEUE_ENV_VARS, QUEUE_KEYS, type QueueKey, SQS_CALL_BUDGET_MS } from '../queue/port.js';
import { PARAMETER_MAX_AGE_SECONDS } from '../secrets/max-age.js';
import { type EntityFilter, readEntities } from './entities.js';
import { boolEnv, ConfigError, intEnv, listEnv, optionalEnv, requireEnv } from './env.js';
import { SecretsJsonSchema } from './secrets-schema.js';

export interface IngestConfig {
  queueUrls: Record<QueueKey, string>;
  headerPrefix: string | undefined;
  /** Secrets from WEBHOOK_SECRET and WEBHOOK_SECRETS (the SSM parameter, when named, is read at run time). */
  secrets: SecretConfig;
  secretsParameter: string | undefined;
  /** How long the secrets parameter is cached (WEBHOOK_SECRETS_MAX_AGE_SECONDS, default 300). */
  secretsMaxAgeSeconds: number;
  stateEventToken: string | undefined;
  allowUnsigned: boolean;
  maxEventAgeSeconds: number;
  maxClockSkewSeconds: number;
  maxBodyBytes: number;
  /** How long SendMessage may take before the answer is 503 (ENQUEUE_TIMEOUT_MS, default SQS_CALL_BUDGET_MS). */
  enqueueTimeoutMs: number;
  /** ENTITIES: the entities whose rows are stored; undefined for every entity. */
  entities: EntityFilter | undefined;
}

/**
 * Parses WEBHOOK_SECRETS / the SSM parameter value. Throws a ConfigError that names `source` but
 * never echoes the value.
 */
export function parseSecretsJson(json: string, source: string): Record<string, string[]> {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new ConfigError(
      `${source} must be a JSON object of ContextIdentifier to an array of secrets`,
      source,
    );
  }
  const parsed = z.safeParse(SecretsJsonSchema, value);
  if (!parsed.success) {
    throw new ConfigError(
      `${source} must be a JSON object of ContextIdentifier to an array of secrets`,
      source,
    );
  }
  return parsed.data;
}

/** Merges the fallback list with a per-context map (whose `*` entry, when present, replaces the fallback). */
export function secretConfig(fallback: string[], byContext: Record<string, string[]>): SecretConfig {
  const { '*': wildcard, ...contexts } = byContext;
  return { fallback: wildcard ?? fallback, byContext: contexts };
}

/**
 * How long the ingest keeps the secrets parameter it read by default: a secret added to it is accepted
 * by every warm instance this long after, at the latest.
 */
export const SECRETS_MAX_AGE_SECONDS = PARAMETER_MAX_AGE_SECONDS;

const HEADER_PREFIX = /^X-[A-Za-z0-9]+(-[A-Za-z0-9]+)*-?$/i;

/**
 * HEADER_PREFIX as the sender writes it, `X-SuperOffice` for `X-SuperOffice-Event`. A prefix without
 * `X-`, or one that already ends in `-Event`, would refuse every delivery: refused here, at start.
 */
function headerPrefixEnv(env: Record<string, string | undefined>): string | undefined {
  const prefix = optionalEnv('HEADER_PREFIX', env)?.trim();
  if (prefix === undefined) return undefined;
  if (!HEADER_PREFIX.test(prefix) || /-(event|eventid|signature)-?$/i.test(prefix)) {
    throw new ConfigError(
      'HEADER_PREFIX must be the prefix of the delivery headers, starting with X- (for example X-SuperOffice for X-SuperOffice-Event)',
      'HEADER_PREFIX',
    );
  }
  return prefix;
}

/** Reads the ingest's environment once, strictly. */
export function readIngestConfig(env: Record<string, string | undefined> = process.env): IngestConfig {
  const secretsJson = optionalEnv('WEBHOOK_SECRETS', env);
  return {
    queueUrls: Object.fromEntries(
      QUEUE_KEYS.map((key) => [key, requireEnv(QUEUE_ENV_VARS[key], env)]),
    ) as Record<QueueKey, string>,

    headerPrefix: headerPrefixEnv(env),
    secrets: secretConfig(
      listEnv('WEBHOOK_SECRET', env),
      secretsJson === undefined ? {} : parseSecretsJson(secretsJson, 'WEBHOOK_SECRETS'),
    ),
    secretsParameter: optionalEnv('WEBHOOK_SECRETS_PARAMETER', env),
    secretsMaxAgeSeconds: intEnv('WEBHOOK_SECRETS_MAX_AGE_SECONDS', SECRETS_MAX_AGE_SECONDS, env),
    stateEventToken: optionalEnv('STATE_EVENT_TOKEN', env),
    allowUnsigned: boolEnv('ALLOW_UNSIGNED', false, env),
    maxEventAgeSeconds: intEnv('MAX_EVENT_AGE_SECONDS', 7 * 24 * 3600, env),
    maxClockSkewSeconds: intEnv('MAX_CLOCK_SKEW_SECONDS', 300, env),
    maxBodyBytes: intEnv('MAX_BODY_BYTES', 1_048_576, env),
    enqueueTimeoutMs: intEnv('ENQUEUE_TIMEOUT_MS', SQS_CALL_BUDGET_MS, env),
    entities: readEntities(env),
  };
}
