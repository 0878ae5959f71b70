import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SSMClient } from '@aws-sdk/client-ssm';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createEventBridgePublisher } from '../../lib/bus/publisher.js';
import { readCrmConfig } from '../../lib/config/crm.js';
import { readEntities } from '../../lib/config/entities.js';
import { intEnv } from '../../lib/config/env.js';
import { tenantEndpoints } from '../../lib/crm/endpoints.js';
import { crmClientFrom } from '../../lib/crm/from-config.js';
import { SECRET_GRACE_MS } from '../../lib/tenants/deps.js';
import { ssmSecretSet } from '../../lib/tenants/secret-set.js';
import { createTenantService, type TenantService } from '../../lib/tenants/service.js';
import { dynamoTenantStore } from '../../lib/tenants/tenant-store.js';
import type { TenantActivity } from '../../lib/tenants/view.js';
import { LOCAL_SECRETS_MAX_AGE_SECONDS, LOCAL_SECRETS_PARAMETER } from '../emulators/ssm-endpoint.js';

export interface LocalTenants {
  /** Undefined when the CRM's API is not configured (`off` says so). */
  service: TenantService | undefined;
  off: string;
  stop(): void;
}

/**
 * The tenant commands of the local runtime's admin API: the CRM of CRM_API_URL and CRM_CREDENTIALS,
 * the secrets parameter of local/emulators/ssm-endpoint.ts, the records in the webhooks table, lifecycle events
 * on the local bus; a replaced secret retires TENANT_SECRET_GRACE_SECONDS (default 900) later, removed by
 * the retireSecrets function on its serverless.yml schedule, as on a stage. The webhooks' TargetUrl is
 * the local ingest's (or RECEIVER_URL when set).
 */
export function localTenants(with_: {
  env: NodeJS.ProcessEnv;
  doc: DynamoDBDocumentClient;
  webhooksTable: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** The receiver's own view of each tenant's deliveries (GET /tenants shows it). */
  activity: TenantActivity;
  /** The whole-tenant erasure offboarding's `erase` runs (local/admin/erase.ts). */
  eraseTenant: (context: string) => Promise<unknown>;
  /** The local ingest's /webhook URL, known once it listens. */
  targetUrl: () => string;
  log: (line: string) => void;
}): LocalTenants {
  const { env, region, credentials } = with_;
  const config = readCrmConfig(env);
  const off =
    "tenants are onboarded through the CRM's API: set CRM_API_URL and CRM_CREDENTIALS (npm run crm prints them)";
  if (!config.enabled || config.credentials === undefined)
    return { service: undefined, off, stop: () => undefined };
  const ssm = new SSMClient({ region, endpoint: env.AWS_ENDPOINT_URL_SSM, credentials });
  const eventBridge = new EventBridgeClient({
    region,
    endpoint: env.AWS_ENDPOINT_URL_EVENTBRIDGE,
    credentials,
  });
  const publisher = env.EVENT_BUS_NAME
    ? createEventBridgePublisher({ client: eventBridge, eventBusName: env.EVENT_BUS_NAME })
    : undefined;
  const endpoints = tenantEndpoints();
  const service = createTenantService(
    {
      crm: crmClientFrom(config, config.credentials, { apiBaseOf: endpoints.apiBaseOf }),
      follow: endpoints.follow,
      secrets: ssmSecretSet({ client: ssm, name: LOCAL_SECRETS_PARAMETER }),
      tenants: dynamoTenantStore({ client: with_.doc, table: with_.webhooksTable }),
      get targetUrl() {
        return env.RECEIVER_URL?.trim() || with_.targetUrl();
      },
      stateEventToken: env.STATE_EVENT_TOKEN?.trim() || undefined,
      propagationMs: (LOCAL_SECRETS_MAX_AGE_SECONDS + 1) * 1000,
      graceMs: intEnv('TENANT_SECRET_GRACE_SECONDS', SECRET_GRACE_MS / 1000, env) * 1000,
      owner: 'admin-api',
      eraseTenant: with_.eraseTenant,
      ...(publisher && {
        publish: async (entry) => {
          await publisher.publish([entry]);
        },
      }),
    },
    readEntities(env),
    with_.activity,
  );
  return {
    service,
    off,
    stop() {
      ssm.destroy();
      eventBridge.destroy();
    },
  };
}
