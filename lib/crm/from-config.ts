import type { CrmConfig, CrmCredentialsByContext } from '../config/crm.js';
import { optionalEnv, requireEnv } from '../config/env.js';
import { PARAMETER_MAX_AGE_SECONDS } from '../secrets/max-age.js';
import { SsmParameterProvider } from '../secrets/ssm.js';
import { credentialsCover } from './auth/index.js';
import { type CrmClient, type CrmClientOptions, createCrmClient } from './client.js';
import { crmCredentials } from './credentials.js';

type EnabledCrmConfig = Extract<CrmConfig, { enabled: true }>;
type Extras = Pick<CrmClientOptions, 'timeLeftMs' | 'signal' | 'fetch' | 'apiBaseOf' | 'follow'>;

/**
 * The CRM client of CRM_API_URL and its per-tenant limits (readCrmConfig) for `credentials`: the one
 * place a setting of the CRM becomes a client option.
 *
 * @example const crm = crmClientFrom(config, config.credentials, { apiBaseOf });
 */
export function crmClientFrom(
  config: EnabledCrmConfig,
  credentials: CrmCredentialsByContext,
  extras: Extras = {},
): CrmClient {
  const { apiUrl, maxInFlight, maxCallsPerSecond, timeoutMs } = config;
  return createCrmClient({
    apiUrl,
    credentials,
    limits: { inFlight: maxInFlight, perSecond: maxCallsPerSecond, timeoutMs },
    ...extras,
  });
}

/** A client and which contexts its credentials cover (a local throwaway context is covered by none). */
export interface CurrentCrmClient {
  crm: CrmClient;
  covers: (context: string) => boolean;
}

/**
 * A function's CRM client for the credentials read now: CRM_CREDENTIALS, or its SSM parameter read
 * again every {@link PARAMETER_MAX_AGE_SECONDS} (in AWS_REGION, at AWS_ENDPOINT_URL_SSM when
 * set, both read at the first read of it). A new client only when they changed, so that tickets and the per-tenant limits outlive
 * an invocation; a rotated parameter drops the old client and its tickets.
 *
 * @example const current = currentCrmClient(config, { timeLeftMs }); const { crm } = await current();
 */
export function currentCrmClient(
  config: EnabledCrmConfig,
  extras: Extras = {},
  env: Record<string, string | undefined> = process.env,
): () => Promise<CurrentCrmClient> {
  let parameters: SsmParameterProvider | undefined;
  let client: (CurrentCrmClient & { json: string }) | undefined;
  return async () => {
    const credentials = await crmCredentials(config, async (name) => {
      parameters ??= new SsmParameterProvider({
        region: requireEnv('AWS_REGION', env),
        endpoint: optionalEnv('AWS_ENDPOINT_URL_SSM', env),
      });
      const value = await parameters.get(name, { maxAge: PARAMETER_MAX_AGE_SECONDS });
      return typeof value === 'string' ? value : undefined;
    });
    const json = JSON.stringify(credentials);
    if (client?.json !== json)
      client = {
        json,
        crm: crmClientFrom(config, credentials, extras),
        covers: (context) => credentialsCover(credentials, context),
      };
    return client;
  };
}
