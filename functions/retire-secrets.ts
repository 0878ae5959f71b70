import { Logger } from '@aws-lambda-powertools/logger';
import { SSMClient } from '@aws-sdk/client-ssm';
import { optionalEnv, requireEnv } from '../lib/config/env.js';
import { defaultClient } from '../lib/store/dynamo-calls.js';
import { TABLE_ENV_VARS } from '../lib/store/tables.js';
import { ssmSecretSet } from '../lib/tenants/secret-set.js';
import { retireDueSecrets } from '../lib/tenants/secrets.js';
import { dynamoTenantStore } from '../lib/tenants/tenant-store.js';

const logger = new Logger();
const deps = {
  secrets: ssmSecretSet({
    client: new SSMClient({ endpoint: optionalEnv('AWS_ENDPOINT_URL_SSM') }),
    name: requireEnv('WEBHOOK_SECRETS_PARAMETER'),
  }),
  tenants: dynamoTenantStore({ client: defaultClient(), table: requireEnv(TABLE_ENV_VARS.webhooks) }),
  owner: 'retire-secrets',
};

/**
 * Scheduled: removes from the secrets parameter the tenants' secrets whose grace period ended (a
 * replaced secret, an offboarded tenant's), so they stop being accepted without anyone running ops.
 * The same sweep every tenant command runs first (lib/tenants/secrets.ts); a tenant a command is
 * changing is left for the next run.
 */
export const handler = async (): Promise<void> => {
  const retired = await retireDueSecrets(deps);
  if (retired > 0) logger.info('secrets retired', { retired });
};
