import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { GetParameterCommand } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type DashboardClients, main } from '../../scripts/ops.js';
import { describedStack, opsClients, outputsWith } from '../support/stack-outputs.js';
import { startTenantWorld, type TenantWorld } from './support.js';

const PARAMETER = '/crm-webhook-receiver/test/webhook-secrets';
const cloudFormation = mockClient(CloudFormationClient);
const eventBridge = mockClient(EventBridgeClient);
let world: TenantWorld;
let clients: DashboardClients;
const saved = { ...process.env };

beforeEach(async () => {
  world = await startTenantWorld({ secretsParameter: PARAMETER });
  cloudFormation.reset();
  eventBridge.reset();
  eventBridge.on(PutEventsCommand).resolves({ FailedEntryCount: 0, Entries: [{ EventId: 'e' }] });
  cloudFormation.on(DescribeStacksCommand).resolves(
    describedStack(
      outputsWith({
        WebhooksTableName: world.tables.webhooks,
        HttpApiUrl: world.targetUrl.replace(/\/webhook$/, ''),
      }),
    ),
  );
  clients = opsClients({ dynamo: world.dynamo.doc, ssm: world.ssmClient });
  Object.assign(process.env, {
    CRM_API_URL: `${world.crm.url}/{ContextIdentifier}/api/v1`,
    CRM_CREDENTIALS: '{"*":{"type":"basic","user":"crm","password":"crm"}}',
    WEBHOOK_SECRETS_MAX_AGE_SECONDS: '1',
  });
});
afterEach(async () => {
  for (const name of [
    'CRM_API_URL',
    'CRM_CREDENTIALS',
    'WEBHOOK_SECRETS_MAX_AGE_SECONDS',
    'TENANT_SECRET_GRACE_SECONDS',
  ])
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  await world.close();
});

/** The stage's secret set as the ingest reads it. */
const stageSet = async () =>
  JSON.parse(
    (await world.ssmClient.send(new GetParameterCommand({ Name: PARAMETER, WithDecryption: true })))
      .Parameter!.Value!,
  ) as Record<string, string[]>;

describe('npm run ops -- onboard, tenants, rotate-secret, offboard', () => {
  it('onboards a tenant on the stage (its secrets parameter, its webhooks table), lists it, rotates and offboards it', async () => {
    const onboarded = (await main(
      [
        'onboard',
        '--stage',
        'test',
        '--context',
        'Cust9',
        '--events',
        'contact.created,contact.changed',
        '--errors-email',
        'ops@example.com',
      ],
      clients,
    )) as { record: Record<string, unknown> };
    expect(onboarded.record).toMatchObject({
      context: 'Cust9',
      status: 'active',
      events: ['contact.created', 'contact.changed'],
    });
    const [data] = world.crm.core.store.context('Cust9').webhooks;
    expect(data).toMatchObject({
      events: ['contact.created', 'contact.changed'],
      errorsEmail: 'ops@example.com',
      targetUrl: world.targetUrl,
    });
    const set = await stageSet();
    expect(set).toEqual({ Cust9: [data!.secret] });
    expect(eventBridge.commandCalls(PutEventsCommand)[0]?.args[0].input.Entries?.[0]).toMatchObject({
      DetailType: 'receiver.tenant.onboarded',
      EventBusName: 'crm-webhook-receiver-test',
    });

    const listed = (await main(['tenants', '--stage', 'test'], clients)) as Array<Record<string, unknown>>;
    expect(listed).toEqual([
      expect.objectContaining({ context: 'Cust9', status: 'active', dataWebhookId: data!.id }),
    ]);

    const first = data!.secret;
    process.env.TENANT_SECRET_GRACE_SECONDS = '2';
    const rotated = (await main(
      ['rotate-secret', '--stage', 'test', '--context', 'Cust9', '--wait'],
      clients,
    )) as {
      retired: number;
    };
    const now = world.crm.core.webhook('Cust9', data!.id).secret;
    expect(now).not.toBe(first);
    // --wait stayed for the grace period and removed the replaced secret from the stage's set.
    expect(rotated.retired).toBe(1);
    expect(await stageSet()).toEqual({ Cust9: [now] });
    const offboarded = (await main(['offboard', '--stage', 'test', '--context', 'Cust9'], clients)) as {
      deleted: number[];
    };
    expect(offboarded.deleted).toEqual([1, 2]);
    expect(world.answered.filter((answer) => answer.status !== 200)).toEqual([]);
  }, 30_000);

  it('says in one line what is missing or refused', async () => {
    await expect(main(['onboard', '--stage', 'test'], clients)).rejects.toThrow(
      '--context is missing: npm run ops -- onboard --stage test --context <ContextIdentifier>',
    );
    await expect(
      main(['onboard', '--stage', 'test', '--context', 'C', '--events', 'nope.created'], clients),
    ).rejects.toThrow(/^events nope.created are not events the receiver takes/);
    delete process.env.CRM_API_URL;
    await expect(main(['tenants', '--stage', 'test'], clients)).rejects.toThrow(
      'CRM_CREDENTIALS is set but CRM_API_URL is not: set both, or neither (reconciliation off)',
    );
  });
});
