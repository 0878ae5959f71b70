import { type CrmConfig, type CrmCredentialsByContext, parseCrmCredentials } from '../config/crm.js';
import { ConfigError } from '../config/env.js';

/**
 * Reconciliation's credentials: CRM_CREDENTIALS as read at start, or the JSON of the SSM SecureString
 * CRM_CREDENTIALS_PARAMETER names, read through `getParameter` (an `SsmParameterProvider`'s `get`
 * with a `maxAge`, lib/secrets/ssm.ts, so a rotation is seen within it). Errors name the setting,
 * never a value.
 *
 * @example
 * const ssm = new SsmParameterProvider({ region });
 * const credentials = await crmCredentials(config, async (name) => String(await ssm.get(name, { maxAge: PARAMETER_MAX_AGE_SECONDS })));
 */
export async function crmCredentials(
  config: Extract<CrmConfig, { enabled: true }>,
  getParameter: (name: string) => Promise<string | undefined>,
): Promise<CrmCredentialsByContext> {
  if (config.credentials) return config.credentials;
  const name = config.credentialsParameter!;
  const value = await getParameter(name);
  if (value === undefined || value.trim() === '')
    throw new ConfigError(
      `CRM_CREDENTIALS_PARAMETER names ${name}, which holds no value: put the CRM_CREDENTIALS JSON in it`,
      'CRM_CREDENTIALS_PARAMETER',
    );
  return parseCrmCredentials(value, 'CRM_CREDENTIALS_PARAMETER');
}
