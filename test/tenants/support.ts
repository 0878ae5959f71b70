import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SSMClient } from '@aws-sdk/client-ssm';
import type { BusEntry } from '../../lib/bus/entry.js';
import { readIngestConfig } from '../../lib/config/ingest.js';
import { tenantEndpoints } from '../../lib/crm/endpoints.js';
import { createCrmClient } from '../../lib/crm/index.js';
import { createPolicySource } from '../../lib/ingest/index.js';
import { QUEUE_ENV_VARS } from '../../lib/queue/port.js';
import { SsmParameterProvider } from '../../lib/secrets/ssm.js';
import { SECRET_GRACE_MS, type TenantDeps } from '../../lib/tenants/deps.js';
import { ssmSecretSet } from '../../lib/tenants/secret-set.js';
import { dynamoTenantStore } from '../../lib/tenants/tenant-store.js';
import { LOCAL_SECRETS_PARAMETER, startLocalSsm } from '../../local/emulators/ssm-endpoint.js';
import { type RunningCrm, startCrm } from '../../tools/crm/start.js';
import { type LocalDynamo, startDynalite } from '../support/dynamo.js';
import { startIngestServer } from '../support/ingest-server.js';

const REGION = 'us-east-1';
const CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

/**
 * The real pieces of onboarding, on loopback: the CRM simulator (its deliveries with the sender's
 * policy), the ingest on a socket with its policy source reading the secrets parameter through SSM's
 * GetParameter (the local SSM endpoint, cached `maxAgeSeconds`), dynalite's webhooks table for the
 * records and leases, and the tenant deps over all of it.
 */
export async function startTenantWorld(
  options: { graceMs?: number; retryDelaysMs?: [number, number]; secretsParameter?: string } = {},
) {
  const parameter = options.secretsParameter ?? LOCAL_SECRETS_PARAMETER;
  const dir = mkdtempSync(join(tmpdir(), 'tenants-'));
  const crm: RunningCrm = await startCrm({
    dataDir: join(dir, 'crm'),
    delivery: { retryDelaysMs: options.retryDelaysMs ?? [50, 200], timeoutMs: 2000 },
  });
  const dynamo: LocalDynamo = await startDynalite();
  const tables = await dynamo.createTables();
  const ssm = await startLocalSsm(dir, () => undefined);
  const ssmClient = new SSMClient({ region: REGION, endpoint: ssm.endpoint, credentials: CREDENTIALS });
  const config = readIngestConfig({
    ...Object.fromEntries(Object.values(QUEUE_ENV_VARS).map((name) => [name, `http://queue/${name}`])),
    WEBHOOK_SECRETS_PARAMETER: parameter,
    WEBHOOK_SECRETS_MAX_AGE_SECONDS: '1',
  });
  const policy = createPolicySource(
    config,
    new SsmParameterProvider({
      region: REGION,
      endpoint: ssm.endpoint,
      credentials: async () => CREDENTIALS,
    }),
  );
  const ingest = await startIngestServer(policy);
  const targetUrl = ingest.url;
  const published: BusEntry[] = [];
  const endpoints = tenantEndpoints();
  const crmClient = createCrmClient({
    apiUrl: `${crm.url}/{ContextIdentifier}/api/v1`,
    credentials: { '*': { type: 'basic', user: 'crm', password: 'crm' } },
    apiBaseOf: endpoints.apiBaseOf,
  });
  const deps: TenantDeps = {
    crm: crmClient,
    follow: endpoints.follow,
    secrets: ssmSecretSet({ client: ssmClient, name: parameter }),
    tenants: dynamoTenantStore({ client: dynamo.doc, table: tables.webhooks }),
    targetUrl,
    stateEventToken: undefined,
    // The ingest caches the parameter 1 s: a secret written is accepted everywhere 1.5 s later.
    propagationMs: 1500,
    graceMs: options.graceMs ?? SECRET_GRACE_MS,
    owner: 'test',
    publish: async (entry) => {
      published.push(entry);
    },
  };
  return {
    crm,
    deps,
    answered: ingest.answered,
    queue: ingest.queue,
    published,
    targetUrl,
    ssmClient,
    /** The local SSM endpoint serving the secrets parameter (a function's AWS_ENDPOINT_URL_SSM). */
    ssmEndpoint: ssm.endpoint,
    parameter,
    tables,
    dynamo,
    /** The events of `published` of one type, their details parsed. */
    events: (type: string) =>
      published
        .filter((entry) => entry.DetailType === type)
        .map((entry) => JSON.parse(entry.Detail!) as Record<string, unknown>),
    async close() {
      await crm.stop();
      await ingest.close();
      ssmClient.destroy();
      await ssm.close();
      await dynamo.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type TenantWorld = Awaited<ReturnType<typeof startTenantWorld>>;
