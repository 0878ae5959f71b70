import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE } from '../../infra/definitions.js';
import { type FakeSsm, startFakeSsm } from '../support/fake-ssm.js';
import { deployerPolicy, missingPermissions } from './deployer-policy.js';
import { FUNCTIONS, type Packaged, packageStack, type Resource, type Template } from './package.js';

/*
 * The production stage as docs/deploy.md deploys it: settings in serverless.yml's params.prod, the
 * account's own values and the state token in SSM (a fake SSM here, which osls reads through
 * AWS_ENDPOINT_URL_SSM). Each configuration is packaged once, in beforeAll.
 */

const STAGE = 'prod';
const PARAMETER = (name: string) => `/${SERVICE}/${STAGE}/${name}`;
const TOKEN = 'state-token-from-ssm';
const EMAIL = 'ops@example.com';
const DIR = join(tmpdir(), `crm-production-${process.pid}`);
const DOMAIN = 'hooks.example.com';
const CERTIFICATE = 'arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-4e5f';

let ssm: FakeSsm;
/** The first deploy as it used to be documented: every setting on the command line. */
let flagged: Template;
/** The redeploy: no flag at all. */
let kept: Template;
let prod: Packaged;
/** A stage of another name made production by the param, without a token but allowed to go without. */
let live: Packaged;
/** What packaging prod says once its token is gone from SSM. */
let refusal: string;

beforeAll(async () => {
  ssm = await startFakeSsm();
  ssm.parameters.set(PARAMETER('state-event-token'), TOKEN);
  ssm.parameters.set(PARAMETER('alert-email'), EMAIL);
  ssm.types.set(PARAMETER('alert-email'), 'String');
  const env = { AWS_ENDPOINT_URL_SSM: ssm.endpoint };
  ({ template: flagged } = await packageStack(
    { alertEmail: EMAIL, stateEventToken: TOKEN },
    join(DIR, 'flagged'),
    env,
    STAGE,
  ));
  prod = await packageStack({}, join(DIR, 'kept'), env, STAGE);
  kept = prod.template;
  live = await packageStack(
    {
      production: 'true',
      allowUnauthenticatedStateEvents: 'true',
      heartbeatHours: '6',
      domainName: DOMAIN,
      certificateArn: CERTIFICATE,
      hostedZoneId: 'Z0123456789ABC',
    },
    join(DIR, 'live'),
    env,
    'live',
  );
  ssm.parameters.delete(PARAMETER('state-event-token'));
  refusal = await packageStack({}, join(DIR, 'refused'), env, STAGE).then(
    () => 'packaged',
    (error: { stdout?: string; stderr?: string }) => `${error.stdout}${error.stderr}`,
  );
}, 600_000);

afterAll(async () => {
  await ssm?.close();
  rmSync(DIR, { recursive: true, force: true });
});

/** The template without the artefacts' upload folder, which is named after the time of packaging. */
function comparable(template: Template): unknown {
  return JSON.parse(
    JSON.stringify(template).replace(/serverless\/[^"]+\/\d+-[0-9T:.Z-]+\//g, 'serverless/<artefacts>/'),
  );
}

function resource(template: Template, logicalId: string): Resource {
  const found = template.Resources[logicalId];
  if (!found) throw new Error(`no resource ${logicalId} in the template`);
  return found;
}

function ingestEnvironment(template: Template): Record<string, unknown> {
  return (
    resource(template, 'IngestLambdaFunction').Properties.Environment as {
      Variables: Record<string, unknown>;
    }
  ).Variables;
}

describe('the production stage keeps its settings across redeploys', () => {
  it('a redeploy without flags packages the same template as the deploy with them', () => {
    expect(comparable(kept)).toEqual(comparable(flagged));
  });

  it('the state token and the alert e-mail come from SSM, under the stage', () => {
    expect(ingestEnvironment(kept).STATE_EVENT_TOKEN).toBe(TOKEN);
    expect(resource(kept, 'AlertEmailSubscription').Properties.Endpoint).toBe(EMAIL);
    expect(kept.Conditions?.HasAlertEmail).toEqual({ 'Fn::Not': [{ 'Fn::Equals': [EMAIL, ''] }] });
    const read = ssm.requests.map((request) => JSON.parse(request.body) as { Name: string });
    expect(new Set(read.map((request) => request.Name))).toEqual(
      new Set(
        ['state-event-token', 'alert-email', 'domain-name', 'certificate-arn', 'hosted-zone-id'].map(
          PARAMETER,
        ),
      ),
    );
  });
});

describe('a production stage is the param production, not the stage name', () => {
  const functions = (template: Template) =>
    Object.entries(template.Resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function');

  it.each([
    ['prod', () => prod],
    ['live (production "true")', () => live],
  ])('%s: termination protection, deletion-protected tables, WARN logging, 90-day retention', (_, get) => {
    const { template, custom, plugins } = get();
    expect(plugins).toContain('./infra/termination-protection.cjs');
    expect(custom.terminationProtection).toBe(true);
    expect(template.Conditions?.IsProduction).toEqual({ 'Fn::Equals': ['true', 'true'] });
    for (const table of ['RowsTable', 'EventsTable', 'WebhooksTable']) {
      expect(resource(template, table).Properties.DeletionProtectionEnabled).toEqual({
        'Fn::If': ['IsProduction', true, false],
      });
    }
    const logGroups = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Logs::LogGroup');
    // One per function, and the HTTP API's access log.
    expect(logGroups).toHaveLength(FUNCTIONS.length + 1);
    for (const group of logGroups) expect(group.Properties.RetentionInDays).toBe(90);
    expect(functions(template)).toHaveLength(FUNCTIONS.length);
    for (const [id, fn] of functions(template)) {
      expect(fn.Properties.Environment, id).toMatchObject({ Variables: { POWERTOOLS_LOG_LEVEL: 'WARN' } });
    }
  });

  it('refuses to package without a state-event token, in one line naming the parameter', () => {
    const line = refusal.split('\n').find((text) => text.includes('production stage'));
    expect(line).toMatch(
      /stage prod is a production stage \(param production "true"\) and its stage param stateEventToken is empty: put a token in SSM at \/crm-webhook-receiver\/prod\/state-event-token/,
    );
    expect(line).toContain('allowUnauthenticatedStateEvents');
  });

  it('packages without one when allowUnauthenticatedStateEvents is "true"', () => {
    expect(ingestEnvironment(live.template).STATE_EVENT_TOKEN).toBe('');
  });
});

describe('the heartbeat (heartbeatHours)', () => {
  it('alarms when no delivery was accepted for that many whole hours, no data counting as none', () => {
    expect(resource(live.template, 'IngestHeartbeatAlarm').Properties).toMatchObject({
      AlarmName: 'crm-webhook-receiver-live-ingest-heartbeat',
      Namespace: 'CrmWebhookReceiver',
      MetricName: 'Accepted',
      Dimensions: [{ Name: 'service', Value: SERVICE }],
      Statistic: 'Sum',
      Period: 3600,
      EvaluationPeriods: 6,
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      TreatMissingData: 'breaching',
      AlarmActions: [{ Ref: 'AlertTopic' }],
    });
    expect(kept.Resources).not.toHaveProperty('IngestHeartbeatAlarm');
  });
});

describe('a custom domain for the HTTP API (domainName, certificateArn, hostedZoneId)', () => {
  it('the domain (regional, TLS 1.2), its mapping at the root of the $default stage, the alias record', () => {
    const { template } = live;
    expect(template.Conditions?.HasCustomDomain).toEqual({ 'Fn::Not': [{ 'Fn::Equals': [DOMAIN, ''] }] });
    expect(template.Conditions?.HasCustomDomainDns).toEqual({
      'Fn::And': [
        { Condition: 'HasCustomDomain' },
        { 'Fn::Not': [{ 'Fn::Equals': ['Z0123456789ABC', ''] }] },
      ],
    });
    expect(resource(template, 'CustomDomain')).toEqual({
      Type: 'AWS::ApiGatewayV2::DomainName',
      Condition: 'HasCustomDomain',
      Properties: {
        DomainName: DOMAIN,
        DomainNameConfigurations: [
          { CertificateArn: CERTIFICATE, EndpointType: 'REGIONAL', SecurityPolicy: 'TLS_1_2' },
        ],
      },
    });
    expect(resource(template, 'CustomDomainMapping')).toEqual({
      Type: 'AWS::ApiGatewayV2::ApiMapping',
      Condition: 'HasCustomDomain',
      Properties: {
        ApiId: { Ref: 'HttpApi' },
        DomainName: { Ref: 'CustomDomain' },
        Stage: { Ref: 'HttpApiStage' },
      },
    });
    expect(resource(template, 'CustomDomainRecord')).toEqual({
      Type: 'AWS::Route53::RecordSet',
      Condition: 'HasCustomDomainDns',
      Properties: {
        HostedZoneId: 'Z0123456789ABC',
        Name: DOMAIN,
        Type: 'A',
        AliasTarget: {
          DNSName: { 'Fn::GetAtt': ['CustomDomain', 'RegionalDomainName'] },
          HostedZoneId: { 'Fn::GetAtt': ['CustomDomain', 'RegionalHostedZoneId'] },
        },
      },
    });
    expect(template.Outputs.CustomDomainWebhookUrl).toMatchObject({
      Condition: 'HasCustomDomain',
      Value: `https://${DOMAIN}/webhook`,
    });
    expect(template.Outputs.CustomDomainTarget).toMatchObject({ Condition: 'HasCustomDomain' });
    // The execute-api address stays: moving the CRM to the domain is a re-registration, once.
    expect(template.Outputs.WebhookUrl).toBeDefined();
  });

  it('none when the params are empty: the resources stay behind a false condition', () => {
    expect(kept.Conditions?.HasCustomDomain).toEqual({ 'Fn::Not': [{ 'Fn::Equals': ['', ''] }] });
    expect(resource(kept, 'CustomDomain').Condition).toBe('HasCustomDomain');
    expect(resource(kept, 'CustomDomainRecord').Condition).toBe('HasCustomDomainDns');
  });
});

describe('the deployer policy (infra/deployer-policy.json)', () => {
  it('grants every action CloudFormation needs for a production stage with a custom domain', () => {
    expect(missingPermissions(live.template)).toEqual([]);
  });

  it('names its actions one by one (no wildcard action), each statement with a Sid', () => {
    const { Version, Statement } = deployerPolicy();
    expect(Version).toBe('2012-10-17');
    for (const statement of Statement) {
      expect(statement.Sid).toMatch(/^[A-Za-z0-9]+$/);
      expect(statement.Effect).toBe('Allow');
      for (const action of statement.Action) expect(action).toMatch(/^[a-z0-9-]+:[A-Za-z0-9]+$/);
      // Resource "*" only where the service offers no resource-level permission.
      if (statement.Resource.includes('*'))
        expect(statement.Sid, JSON.stringify(statement)).toMatch(/NoResourceLevel|EventSourceMappings/);
    }
  });
});
