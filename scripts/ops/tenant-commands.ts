import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { GetParameterCommand, type SSMClient } from '@aws-sdk/client-ssm';
import { SERVICE, tableOutput } from '../../infra/definitions.js';
import { createEventBridgePublisher } from '../../lib/bus/publisher.js';
import { type CrmConfig, parseCrmCredentials, readCrmConfig } from '../../lib/config/crm.js';
import { readEntities } from '../../lib/config/entities.js';
import { ConfigError, intEnv } from '../../lib/config/env.js';
import { SECRETS_MAX_AGE_SECONDS } from '../../lib/config/ingest.js';
import { tenantEndpoints } from '../../lib/crm/endpoints.js';
import { crmClientFrom } from '../../lib/crm/from-config.js';
import { CrmApiError } from '../../lib/crm/index.js';
import { createWebhookStore } from '../../lib/store/index.js';
import { listRecoveries } from '../../lib/store/recovery-list.js';
import { SECRET_GRACE_MS, TenantError } from '../../lib/tenants/deps.js';
import { ssmSecretSet } from '../../lib/tenants/secret-set.js';
import { createTenantService } from '../../lib/tenants/service.js';
import { dynamoTenantStore } from '../../lib/tenants/tenant-store.js';
import { type OpsClients, OpsError, output, type StackOutputs } from './commands.js';
import { erase } from './erase-command.js';

export const TENANT_COMMANDS = ['tenants', 'onboard', 'rotate-secret', 'offboard'] as const;

export const TENANT_HELP = `  tenants                              each tenant: webhooks, secret's age, secrets retiring
  onboard --context C [--events a,b] [--errors-email E] [--receiver-url U]
                                       the tenant's webhooks created in the CRM, a fresh secret accepted first
                                       (waits ${SECRETS_MAX_AGE_SECONDS + 1} s: the ingest's cache of the secrets parameter)
  rotate-secret --context C [--wait]   a new secret accepted, set on the webhooks; the old one retires in ${SECRET_GRACE_MS / 60_000} min
  offboard --context C [--erase] [--wait]   the tenant's webhooks deleted in the CRM, its secrets retiring
                                       (a replaced secret is removed within a minute after its grace period by
                                        the stage's retireSecrets function; --wait stays until then and removes it)
  (CRM_API_URL as the stage's crmApiUrl; CRM_CREDENTIALS, or the stage's crm-credentials parameter;
   STATE_EVENT_TOKEN and WEBHOOK_SECRETS_MAX_AGE_SECONDS as the stage's)`;

/** Whether the command line names a tenant command (they have options of their own: `--events a,b`). */
export function isTenantCommand(argv: readonly string[]): boolean {
  const command = argv.find((arg) => !arg.startsWith('-'));
  return (TENANT_COMMANDS as readonly string[]).includes(command ?? '');
}

/** Parses a tenant command's line: the command, the stage and region, and its own options. */
export function parseTenantArgs(argv: string[]) {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        stage: { type: 'string' },
        region: { type: 'string' },
        context: { type: 'string' },
        events: { type: 'string' },
        'errors-email': { type: 'string' },
        'receiver-url': { type: 'string' },
        erase: { type: 'boolean', default: false },
        wait: { type: 'boolean', default: false },
      },
    });
    return { command: positionals[0] as (typeof TENANT_COMMANDS)[number], values };
  } catch (error) {
    throw new OpsError(`${(error as Error).message.split('. ')[0]}; npm run ops -- --help lists the options`);
  }
}

type TenantValues = ReturnType<typeof parseTenantArgs>['values'];

/**
 * A tenant command on a stage: the records in its webhooks table, the secret set in its secrets
 * parameter (written by ops and the retireSecrets function only), the CRM of CRM_API_URL, lifecycle events on its bus.
 */
export async function tenantCommand(
  clients: OpsClients & { ssm: SSMClient; eventBridge: EventBridgeClient },
  outputs: StackOutputs,
  stage: string,
  command: (typeof TENANT_COMMANDS)[number],
  values: TenantValues,
  env: NodeJS.ProcessEnv = process.env,
): Promise<unknown> {
  const context = values.context?.trim();
  if (command !== 'tenants' && !context)
    throw new OpsError(
      `--context is missing: npm run ops -- ${command} --stage ${stage} --context <ContextIdentifier>`,
    );
  const endpoints = tenantEndpoints();
  const table = output(outputs, tableOutput('webhooks'));
  const service = createTenantService(
    {
      crm: crmClientFrom(crmConfig(env), await credentials(clients.ssm, stage, env), {
        apiBaseOf: endpoints.apiBaseOf,
      }),
      follow: endpoints.follow,
      secrets: ssmSecretSet({ client: clients.ssm, name: `/${SERVICE}/${stage}/webhook-secrets` }),
      tenants: dynamoTenantStore({ client: clients.dynamo, table }),
      targetUrl:
        values['receiver-url'] ?? env.RECEIVER_URL?.trim() ?? `${output(outputs, 'HttpApiUrl')}/webhook`,
      stateEventToken: env.STATE_EVENT_TOKEN?.trim() || undefined,
      // As long as the ingest caches the secrets parameter (its WEBHOOK_SECRETS_MAX_AGE_SECONDS), and a second.
      propagationMs: (intEnv('WEBHOOK_SECRETS_MAX_AGE_SECONDS', SECRETS_MAX_AGE_SECONDS, env) + 1) * 1000,
      graceMs: intEnv('TENANT_SECRET_GRACE_SECONDS', SECRET_GRACE_MS / 1000, env) * 1000,
      owner: `ops@${hostname()}`,
      eraseTenant: (context) => erase(clients, outputs, { context }),
      progress: (line) => process.stderr.write(`${line}\n`),
      ...(outputs.EventBusName && {
        publish: async (entry) => {
          const publisher = createEventBridgePublisher({
            client: clients.eventBridge,
            eventBusName: outputs.EventBusName!,
          });
          await publisher.publish([entry]);
        },
      }),
    },
    readEntities({ ENTITIES: stageEntities(outputs) ?? env.ENTITIES }),
    {
      ...createWebhookStore({ client: clients.dynamo, table }),
      listRecoveries: (context) => listRecoveries(clients.dynamo, table, context),
    },
  );
  try {
    if (command === 'tenants') return await service.list();
    if (command === 'onboard')
      return await service.onboard(context!, {
        ...(values.events && {
          events: values.events
            .split(',')
            .map((name) => name.trim())
            .filter(Boolean),
        }),
        ...(values['errors-email'] && { errorsEmail: values['errors-email'] }),
      });
    const done =
      command === 'rotate-secret'
        ? await service.rotate(context!)
        : await service.offboard(context!, { erase: values.erase });
    if (!values.wait) return done;
    const wait = Math.max(0, Date.parse(done.retireAt) - Date.now()) + 1000;
    process.stderr.write(
      `${context}: waiting ${Math.ceil(wait / 1000)} s for the grace period, then retiring\n`,
    );
    await new Promise((resolve) => setTimeout(resolve, wait));
    return { ...done, retired: await service.sweep() };
  } catch (error) {
    if (
      error instanceof TenantError ||
      error instanceof CrmApiError ||
      error instanceof RangeError ||
      error instanceof ConfigError
    )
      throw new OpsError(error.message, { cause: error });
    throw error;
  }
}

/** CRM_API_URL and the CRM's limits (CRM_MAX_IN_FLIGHT, ...) as the functions read them. */
function crmConfig(env: NodeJS.ProcessEnv): Extract<CrmConfig, { enabled: true }> {
  try {
    const config = readCrmConfig({
      ...env,
      CRM_CREDENTIALS_PARAMETER: env.CRM_CREDENTIALS ? undefined : 'read below',
    });
    if (config.enabled) return config;
  } catch (error) {
    if (error instanceof ConfigError) throw new OpsError(error.message);
    throw error;
  }
  throw new OpsError(
    "CRM_API_URL is not set: set it to the stage's crmApiUrl (the CRM's API base with {ContextIdentifier})",
  );
}

/** CRM_CREDENTIALS, or the stage's crm-credentials parameter (what its reconcile function reads). */
async function credentials(ssm: SSMClient, stage: string, env: NodeJS.ProcessEnv) {
  if (env.CRM_CREDENTIALS?.trim()) return parseCrmCredentials(env.CRM_CREDENTIALS, 'CRM_CREDENTIALS');
  const name = `/${SERVICE}/${stage}/crm-credentials`;
  const answer = await ssm
    .send(new GetParameterCommand({ Name: name, WithDecryption: true }))
    .catch((error: unknown) => {
      throw new OpsError(
        `the CRM credentials parameter ${name} cannot be read (${(error as Error).name}): set CRM_CREDENTIALS, or create it`,
      );
    });
  return parseCrmCredentials(answer.Parameter?.Value ?? '', name);
}

/** The stage's ENTITIES, from its IngestSettings output (absent on an older stack). */
function stageEntities(outputs: StackOutputs): string | undefined {
  try {
    const settings = JSON.parse(outputs.IngestSettings ?? '{}') as { ENTITIES?: unknown };
    return typeof settings.ENTITIES === 'string' ? settings.ENTITIES : undefined;
  } catch {
    return undefined;
  }
}
