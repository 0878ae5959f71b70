import * as z from 'zod/mini';
import { ConfigError, intEnv, optionalEnv } from './env.js';

type Env = Record<string, string | undefined>;

/** The placeholder CRM_API_URL must hold, replaced by each tenant's ContextIdentifier. */
export const CONTEXT_PLACEHOLDER = '{ContextIdentifier}';

const NonEmpty = z.string().check(z.minLength(1));

/** On-premises style: `Authorization: Basic` with a user and password. */
export const BasicCredentialsSchema = z.strictObject({
  type: z.literal('basic'),
  user: NonEmpty,
  password: NonEmpty,
});

/**
 * Online server-to-server (crm-rest-api.md, "Addresses and authentication"): the per-tenant system
 * user token, the app's client secret (`ApplicationToken`, sent as `SO-AppToken`) and the app's RSA
 * private key (PEM) that signs the system user token.
 */
export const SystemUserCredentialsSchema = z.strictObject({
  type: z.literal('systemUser'),
  systemUserToken: NonEmpty,
  applicationToken: NonEmpty,
  privateKey: NonEmpty,
});

export const CrmCredentialsSchema = z.discriminatedUnion('type', [
  BasicCredentialsSchema,
  SystemUserCredentialsSchema,
]);

/** CRM_CREDENTIALS and its SSM parameter: ContextIdentifier (or `*` for every other) to credentials. */
export const CrmCredentialsJsonSchema = z.record(NonEmpty, CrmCredentialsSchema);

export type BasicCredentials = z.infer<typeof BasicCredentialsSchema>;
export type SystemUserCredentials = z.infer<typeof SystemUserCredentialsSchema>;
export type CrmCredentials = z.infer<typeof CrmCredentialsSchema>;
export type CrmCredentialsByContext = z.infer<typeof CrmCredentialsJsonSchema>;

/** The per-tenant limits when CRM_MAX_IN_FLIGHT, CRM_MAX_CALLS_PER_SECOND and CRM_TIMEOUT_MS are unset. */
export const CRM_LIMIT_DEFAULTS = { maxInFlight: 4, maxCallsPerSecond: 10, timeoutMs: 10_000 } as const;

/** Reconciliation's settings; `enabled: false` when CRM_API_URL is unset (gaps cannot be recovered). */
export type CrmConfig =
  | { enabled: false }
  | {
      enabled: true;
      /** CRM_API_URL, with `{ContextIdentifier}` in it. */
      apiUrl: string;
      /** CRM_CREDENTIALS, when given in the environment. */
      credentials: CrmCredentialsByContext | undefined;
      /** CRM_CREDENTIALS_PARAMETER: an SSM SecureString holding the same JSON (read at run time). */
      credentialsParameter: string | undefined;
      /** Per tenant: API calls in flight at once (CRM_MAX_IN_FLIGHT, default 4). */
      maxInFlight: number;
      /** Per tenant: API calls started per second (CRM_MAX_CALLS_PER_SECOND, default 10). */
      maxCallsPerSecond: number;
      /** How long one API call may take (CRM_TIMEOUT_MS, default 10000). */
      timeoutMs: number;
    };

const ACCEPTED =
  'a JSON object of ContextIdentifier (or "*" for every other) to {"type":"basic","user":…,"password":…} or {"type":"systemUser","systemUserToken":…,"applicationToken":…,"privateKey":"<PEM>"}';

/**
 * Parses CRM_CREDENTIALS or the SSM parameter's value. Throws a one-line ConfigError naming `source`
 * and the path of the first wrong entry, never a value (the JSON holds secrets).
 */
export function parseCrmCredentials(json: string, source: string): CrmCredentialsByContext {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    // JSON.parse's own message quotes the text: not repeated.
    throw new ConfigError(`${source} is not JSON: it must be ${ACCEPTED}`, source);
  }
  const parsed = z.safeParse(CrmCredentialsJsonSchema, value);
  if (!parsed.success) {
    const path = parsed.error.issues[0]?.path.map((part) => JSON.stringify(String(part))).join('.');
    throw new ConfigError(
      `${source}${path ? ` at ${path}` : ''} is not accepted: it must be ${ACCEPTED}`,
      source,
    );
  }
  return parsed.data;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** CRM_API_URL: an https URL (http only to this machine) with `{ContextIdentifier}` in its path. */
function apiUrlEnv(raw: string): string {
  const fail = () =>
    new ConfigError(
      `CRM_API_URL must be the CRM's API base with ${CONTEXT_PLACEHOLDER} in its path, https (http only to localhost), for example https://online.superoffice.com/${CONTEXT_PLACEHOLDER}/api/v1`,
      'CRM_API_URL',
    );
  const trimmed = raw.trim().replace(/\/+$/, '');
  if (!trimmed.includes(CONTEXT_PLACEHOLDER)) throw fail();
  let url: URL;
  try {
    url = new URL(trimmed.replace(CONTEXT_PLACEHOLDER, 'ctx'));
  } catch {
    throw fail();
  }
  const secure = url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname));
  if (!secure || url.username || url.password || url.search || url.hash || !url.pathname.includes('/ctx'))
    throw fail();
  return trimmed;
}

/**
 * Reads reconciliation's environment once, strictly: CRM_API_URL (unset: reconciliation is off),
 * CRM_CREDENTIALS or CRM_CREDENTIALS_PARAMETER (exactly one when it is on), and the per-tenant limits.
 *
 * @example if (!readCrmConfig().enabled) log('reconciliation is off: gaps cannot be recovered');
 */
export function readCrmConfig(env: Env = process.env): CrmConfig {
  const rawUrl = optionalEnv('CRM_API_URL', env);
  const credentialsJson = optionalEnv('CRM_CREDENTIALS', env);
  const credentialsParameter = optionalEnv('CRM_CREDENTIALS_PARAMETER', env)?.trim();
  if (rawUrl === undefined) {
    const stray =
      credentialsJson !== undefined ? 'CRM_CREDENTIALS' : credentialsParameter && 'CRM_CREDENTIALS_PARAMETER';
    if (stray)
      throw new ConfigError(
        `${stray} is set but CRM_API_URL is not: set both, or neither (reconciliation off)`,
        stray,
      );
    return { enabled: false };
  }
  const apiUrl = apiUrlEnv(rawUrl);
  if ((credentialsJson === undefined) === (credentialsParameter === undefined))
    throw new ConfigError(
      'CRM_API_URL needs exactly one of CRM_CREDENTIALS (JSON) or CRM_CREDENTIALS_PARAMETER (an SSM SecureString name)',
      credentialsJson === undefined ? 'CRM_CREDENTIALS' : 'CRM_CREDENTIALS_PARAMETER',
    );
  return {
    enabled: true,
    apiUrl,
    credentials:
      credentialsJson === undefined ? undefined : parseCrmCredentials(credentialsJson, 'CRM_CREDENTIALS'),
    credentialsParameter,
    maxInFlight: intEnv('CRM_MAX_IN_FLIGHT', CRM_LIMIT_DEFAULTS.maxInFlight, env),
    maxCallsPerSecond: intEnv('CRM_MAX_CALLS_PER_SECOND', CRM_LIMIT_DEFAULTS.maxCallsPerSecond, env),
    timeoutMs: intEnv('CRM_TIMEOUT_MS', CRM_LIMIT_DEFAULTS.timeoutMs, env),
  };
}
