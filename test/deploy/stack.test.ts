import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { AUTHENTICATION_FAILURES } from '../../infra/alarms.js';
import { ALL_QUEUE_KEYS, loadDefinitions, SERVICE, TABLE_KEYS } from '../../infra/definitions.js';
import { loadAccessLogFormat } from '../../infra/serverless-file.js';
import { EVENT_ID_INDEX, ROW_SET_INDEX } from '../../lib/store/keys.js';
import { RECOVERY_READ_ATTRIBUTES, RECOVERY_WRITE_ATTRIBUTES } from '../../lib/store/recovery.js';
import { ASSUMPTIONS } from '../../scripts/cost/prices.js';
import { buildSampleBody, buildSampleDelivery, sampleHttpApiEvent } from '../../tools/samples.js';
import { IMPORT_ENV } from '../bench/bundles.js';
import { outputs } from '../support/stack-outputs.js';
import { missingPermissions } from './deployer-policy.js';
import { bundleActions, CALLED_SERVICES, roleActions } from './grants.js';
import {
  bundleCode,
  bundlePath,
  bundleSize,
  ENTRIES,
  FUNCTIONS,
  type FunctionKey,
  type PackagedProvider,
  packageStack,
  type Resource,
  STAGE,
  type Template,
  zipPath,
} from './package.js';

const PREFIX = `${SERVICE}-${STAGE}`;
/**
 * What a delivery waits for (the ingest, the workers) keeps its cold start within 350 KB; the
 * reconciliation's functions and the scheduled retirement of secrets run off that path, where a cold
 * start adds milliseconds to work that waits seconds or minutes, so they may carry more (docs/deploy.md,
 * "Bundles").
 */
const BUNDLE_BUDGET_BYTES = 350 * 1024;
const BACKGROUND_BUDGET_BYTES = 400 * 1024;
const BACKGROUND: readonly FunctionKey[] = ['reconcile', 'reconcilePoll', 'retireSecrets'];
const budgetOf = (key: FunctionKey) =>
  BACKGROUND.includes(key) ? BACKGROUND_BUDGET_BYTES : BUNDLE_BUDGET_BYTES;
const getAtt = (logicalId: string, attribute = 'Arn') => ({ 'Fn::GetAtt': [logicalId, attribute] });
const ref = (logicalId: string) => ({ Ref: logicalId });
const pascal = (key: string) => key.charAt(0).toUpperCase() + key.slice(1);

let template: Template;
/** The provider settings osls recorded for `deploy` (the default stack). */
let provider: PackagedProvider;
/** serverless.yml's `custom`, resolved for the default stack. */
let custom: Record<string, unknown>;
/** The same stack with the opt-in params: `--param=ingestFunctionUrl=true --param=eventIdIndex=true`. */
let withFunctionUrl: Template;

beforeAll(async () => {
  ({ template, provider, custom } = await packageStack());
  ({ template: withFunctionUrl } = await packageStack(
    { ingestFunctionUrl: 'true', eventIdIndex: 'true' },
    '.serverless-url',
  ));
}, 600_000);

function resource(logicalId: string, type?: string): Resource {
  const found = template.Resources[logicalId];
  if (!found) throw new Error(`no resource ${logicalId} in the template`);
  if (type !== undefined) expect(found.Type).toBe(type);
  return found;
}

/**
 * `value` as CloudFormation deploys it from template `t`: each `Fn::If` on a condition that compares two
 * strings replaced by its branch, `Ref: AWS::NoValue` dropped.
 */
function deployedValue(value: unknown, t: Template = template): unknown {
  if (Array.isArray(value)) return value.map((item) => deployedValue(item, t));
  if (typeof value !== 'object' || value === null) return value;
  const branches = (value as Record<string, unknown>)['Fn::If'] as [string, unknown, unknown] | undefined;
  if (branches !== undefined) {
    const condition = t.Conditions?.[branches[0]] as { 'Fn::Equals': [string, string] };
    const [a, b] = condition['Fn::Equals'];
    return deployedValue(a === b ? branches[1] : branches[2], t);
  }
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const next = deployedValue(item, t);
    if ((next as { Ref?: unknown } | undefined)?.Ref !== 'AWS::NoValue') out[key] = next;
  }
  return out;
}

/** A table's properties as deployed from `t`. */
function tableProperties(logicalId: string, t: Template = template): Record<string, unknown> {
  return deployedValue(t.Resources[logicalId]?.Properties, t) as Record<string, unknown>;
}

function ofType(type: string): Array<[string, Resource]> {
  return Object.entries(template.Resources).filter(([, r]) => r.Type === type);
}

function fn(key: FunctionKey): Resource {
  return resource(`${pascal(key)}LambdaFunction`, 'AWS::Lambda::Function');
}

function workerTimeouts(): number[] {
  return (
    ['contactWorker', 'activityWorker', 'entitiesWorker', 'webhookStateWorker', 'reconcile'] as const
  ).map((key) => fn(key).Properties.Timeout as number);
}

describe('functions', () => {
  it('are eight, on nodejs22.x arm64, each with its own role and tags', () => {
    expect(
      ofType('AWS::Lambda::Function')
        .map(([id]) => id)
        .sort(),
    ).toEqual(FUNCTIONS.map((key) => `${pascal(key)}LambdaFunction`).sort());
    for (const key of FUNCTIONS) {
      const { Properties } = fn(key);
      expect(Properties.Runtime).toBe('nodejs22.x');
      expect(Properties.Architectures).toEqual(['arm64']);
      expect(Properties.Handler).toMatch(/\.handler$/);
      expect(Properties.Role).toEqual(getAtt(`${pascal(key)}Role`));
      expect(Properties.Tags).toEqual(
        expect.arrayContaining([
          { Key: 'application', Value: SERVICE },
          { Key: 'stage', Value: STAGE },
        ]),
      );
      if (key !== 'ingest') expect(Properties).not.toHaveProperty('ReservedConcurrentExecutions');
    }
    expect(template.Resources).not.toHaveProperty('IamRoleLambdaExecution');
  });

  it('log JSON with Lambda advanced logging: system lines from WARN, application lines from INFO (EMF survives)', () => {
    for (const key of FUNCTIONS) {
      // An EMF line has no "level" key, which Lambda files at INFO: a higher application level drops metrics.
      expect(fn(key).Properties.LoggingConfig).toEqual({
        LogFormat: 'JSON',
        SystemLogLevel: 'WARN',
        ApplicationLogLevel: 'INFO',
      });
    }
  });

  it('ingest answers within a few seconds', () => {
    const { Properties } = fn('ingest');
    expect(Properties.Timeout).toBeGreaterThanOrEqual(3);
    expect(Properties.Timeout).toBeLessThanOrEqual(10);
    expect(Properties).not.toHaveProperty('ProvisionedConcurrencyConfig');
  });

  it('ingest: reserved concurrency (ingestReservedConcurrency), under a route throttle above what it serves', () => {
    const reserved = fn('ingest').Properties.ReservedConcurrentExecutions as number;
    expect(reserved).toBe(20);
    const throttle = resource('HttpApiStage', 'AWS::ApiGatewayV2::Stage').Properties.DefaultRouteSettings as {
      ThrottlingRateLimit: number;
      ThrottlingBurstLimit: number;
    };
    expect(throttle).toEqual({ ThrottlingRateLimit: 1000, ThrottlingBurstLimit: 1000 });
    // docs/capacity.md: `reserved` executions of ASSUMPTIONS.ingestMs each serve reserved × 1000 / ms per second;
    // the throttle must never turn away what they could serve, and its burst must cover them all at once.
    expect(throttle.ThrottlingRateLimit).toBeGreaterThan((reserved * 1000) / ASSUMPTIONS.ingestMs);
    expect(throttle.ThrottlingBurstLimit).toBeGreaterThan(reserved);
    // API Gateway's account-wide limits per region: 10,000 requests per second, a burst of 5,000.
    expect(throttle.ThrottlingRateLimit).toBeLessThanOrEqual(10_000);
    expect(throttle.ThrottlingBurstLimit).toBeLessThanOrEqual(5_000);
  });

  it('ingest gets its queues, the name of its secrets parameter, and never a secret', () => {
    const env = (fn('ingest').Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    // Every queue of lib/queue/port.ts, under the variable the ingest reads (QUEUE_ENV_VARS), which
    // infra/ingest-environment.cjs adds to serverless.yml's custom.ingestEnvironment; never the reconcile
    // queue, the receiver's own (OWN_QUEUE_ENV_VARS).
    for (const queue of loadDefinitions({ stage: STAGE }).queues) {
      if (queue.key === 'reconcile') expect(env).not.toHaveProperty(queue.envVar);
      else expect(env[queue.envVar], queue.envVar).toEqual(ref(queue.logicalId));
    }
    expect(env).toMatchObject({
      WEBHOOK_SECRETS_PARAMETER: `/${SERVICE}/${STAGE}/webhook-secrets`,
      ALLOW_UNSIGNED: 'false',
      POWERTOOLS_METRICS_NAMESPACE: 'CrmWebhookReceiver',
      POWERTOOLS_SERVICE_NAME: SERVICE,
    });
    for (const key of FUNCTIONS) {
      const variables = (fn(key).Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(variables).not.toHaveProperty('WEBHOOK_SECRET');
      expect(variables).not.toHaveProperty('WEBHOOK_SECRETS');
    }
  });

  it('workers get their tables; the state worker gets the alert topic', () => {
    const env = (key: FunctionKey) =>
      (fn(key).Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    for (const key of ['contactWorker', 'activityWorker', 'entitiesWorker'] as const) {
      expect(env(key)).toMatchObject({
        ROWS_TABLE: ref('RowsTable'),
        EVENTS_TABLE: ref('EventsTable'),
        WEBHOOKS_TABLE: ref('WebhooksTable'),
      });
    }
    expect(env('webhookStateWorker')).toMatchObject({
      WEBHOOKS_TABLE: ref('WebhooksTable'),
      ALERT_TOPIC_ARN: ref('AlertTopic'),
    });
    expect(env('webhookStateWorker')).not.toHaveProperty('ROWS_TABLE');
  });

  it('the poll gets the watch settings, the scheduled full pass off by default', () => {
    const env = (fn('reconcilePoll').Properties.Environment as { Variables: Record<string, unknown> })
      .Variables;
    expect(env).toMatchObject({
      WEBHOOKS_TABLE: ref('WebhooksTable'),
      RECONCILE_QUEUE_URL: ref('ReconcileQueue'),
      RECONCILE_POLL_SECONDS: '',
      REACTIVATE_WEBHOOKS: '',
      RECEIVER_URL: '',
      RECONCILE_FULL_HOURS: '0',
      RECONCILE_POLL_MAX_IN_FLIGHT: '',
    });
  });

  it('the reconcile function gets its queue, the row queues, the rows table and reconciliation off by default', () => {
    const env = (fn('reconcile').Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    const reconcileQueue = loadDefinitions({ stage: STAGE }).queues.find(
      (queue) => queue.key === 'reconcile',
    );
    expect(env).toMatchObject({
      RECONCILE_QUEUE_URL: ref('ReconcileQueue'),
      // The queue's own maxReceiveCount, from infra/resources.yml.
      RECONCILE_MAX_RECEIVE_COUNT: String(reconcileQueue?.dlq.maxReceiveCount),
      CONTACT_QUEUE_URL: ref('ContactQueue'),
      ACTIVITY_QUEUE_URL: ref('ActivityQueue'),
      ENTITIES_QUEUE_URL: ref('EntitiesQueue'),
      ROWS_TABLE: ref('RowsTable'),
      WEBHOOKS_TABLE: ref('WebhooksTable'),
      EVENT_BUS_NAME: ref('EventBus'),
      // crmApiUrl "": off, and no credentials parameter (lib/config/crm.ts refuses one without the URL).
      CRM_API_URL: '',
      CRM_CREDENTIALS_PARAMETER: '',
      // A run's bounds: "" for the defaults (lib/config/reconcile-bounds.ts).
      RECONCILE_MAX_RUN_HOURS: '',
      RECONCILE_MAX_INVOCATIONS: '',
      RECONCILE_MAX_DELETES: '',
      RECONCILE_MAX_DELETES_PERCENT: '',
    });
    for (const name of ['WEBHOOK_STATE_QUEUE_URL', 'PARKED_QUEUE_URL', 'CRM_CREDENTIALS'])
      expect(env, name).not.toHaveProperty(name);
  });

  it('ingest is routed from /webhook on the HTTP API, every method (it answers 405 but to POST)', () => {
    const routes = ofType('AWS::ApiGatewayV2::Route').map(([, r]) => r.Properties.RouteKey);
    expect(routes).toEqual(['ANY /webhook']);
    const integrations = ofType('AWS::ApiGatewayV2::Integration');
    expect(integrations).toHaveLength(1);
    expect(JSON.stringify(integrations[0]?.[1].Properties.IntegrationUri)).toContain('IngestLambdaFunction');
  });
});

describe('deployment bucket', () => {
  it('encrypted by default (SSE-S3), public access blocked, plain HTTP refused', () => {
    const bucket = resource('ServerlessDeploymentBucket', 'AWS::S3::Bucket').Properties;
    expect(bucket.BucketEncryption).toEqual({
      ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
    });
    expect(bucket.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    const policy = resource('ServerlessDeploymentBucketPolicy', 'AWS::S3::BucketPolicy').Properties;
    expect(policy.PolicyDocument).toMatchObject({
      Statement: [{ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': false } } }],
    });
  });

  it('every artefact is uploaded with server-side encryption requested explicitly', () => {
    // `deploy` sends it as ServerSideEncryption with each PutObject.
    expect(provider.deploymentBucketObject).toMatchObject({ serverSideEncryption: 'AES256' });
  });
});

describe('HTTP API access logs', () => {
  const settings = () =>
    resource('HttpApiStage', 'AWS::ApiGatewayV2::Stage').Properties.AccessLogSettings as
      | { DestinationArn: unknown; Format: string }
      | undefined;

  it('the stage writes the format of serverless.yml to its own log group, kept as long as the functions’', () => {
    expect(settings()).toEqual({ DestinationArn: getAtt('HttpApiLogGroup'), Format: loadAccessLogFormat() });
    expect(resource('HttpApiLogGroup', 'AWS::Logs::LogGroup').Properties).toEqual({
      LogGroupName: `/aws/http-api/${PREFIX}`,
      RetentionInDays: resource('IngestLogGroup').Properties.RetentionInDays,
    });
    expect(resource('HttpApiLogGroup').Properties.RetentionInDays).toBe(30);
  });

  it('one JSON object per request, of $context variables only: no body, header, query string or path', () => {
    const fields = JSON.parse(settings()!.Format) as Record<string, string>;
    expect(Object.keys(fields)).toEqual(expect.arrayContaining(['requestId', 'status', 'routeKey', 'ip']));
    for (const [name, value] of Object.entries(fields)) {
      expect(value, name).toMatch(/^\$context\.[A-Za-z]+(\.[A-Za-z]+)*$/);
      // $context.path is the raw path; the state token travels in the query string or a header.
      expect(value, name).not.toMatch(/body|header|signature|querystring|path|authorizer/i);
    }
  });
});

describe('event source mappings', () => {
  const expected = {
    contactWorker: 'ContactQueue',
    activityWorker: 'ActivityQueue',
    entitiesWorker: 'EntitiesQueue',
    webhookStateWorker: 'WebhookStateQueue',
  } as const;

  it('the reconcile queue: one request per invocation, partial batch failures, bounded concurrency', () => {
    const mapping = ofType('AWS::Lambda::EventSourceMapping').find(([, r]) =>
      JSON.stringify(r.Properties.FunctionName).includes('ReconcileLambdaFunction'),
    );
    expect(mapping?.[1].Properties).toMatchObject({
      EventSourceArn: getAtt('ReconcileQueue'),
      BatchSize: 1,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 2 },
    });
  });

  it('one per worker queue: batches of 10, partial batch failures, bounded concurrency', () => {
    const mappings = ofType('AWS::Lambda::EventSourceMapping');
    expect(mappings).toHaveLength(5);
    for (const [key, queue] of Object.entries(expected)) {
      const mapping = mappings.find(([, r]) =>
        JSON.stringify(r.Properties.FunctionName).includes(`${pascal(key)}LambdaFunction`),
      );
      expect(mapping, key).toBeDefined();
      const props = mapping![1].Properties;
      expect(props.EventSourceArn).toEqual(getAtt(queue));
      expect(props.BatchSize).toBe(10);
      expect(props.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
      const { MaximumConcurrency } = props.ScalingConfig as { MaximumConcurrency: number };
      expect(MaximumConcurrency).toBeGreaterThanOrEqual(2);
      expect(MaximumConcurrency).toBeLessThanOrEqual(1000);
    }
  });
});

describe('queues', () => {
  const fifo = {
    FifoQueue: true,
    ContentBasedDeduplication: false,
    DeduplicationScope: 'messageGroup',
    FifoThroughputLimit: 'perMessageGroupId',
    MessageRetentionPeriod: 14 * 24 * 3600,
    SqsManagedSseEnabled: true,
  };
  const names: Record<string, string> = {
    contact: 'contact',
    activity: 'activity',
    webhookState: 'webhook-state',
    entities: 'entities',
    parked: 'parked',
    reconcile: 'reconcile',
  };

  it('are twelve: six FIFO queues and their FIFO dead-letter queues', () => {
    expect(ofType('AWS::SQS::Queue')).toHaveLength(12);
  });

  it.each(ALL_QUEUE_KEYS)(
    '%s: high-throughput FIFO, 14 days, encrypted, redriven to its DLQ after 5 receives',
    (key) => {
      const queue = resource(`${pascal(key)}Queue`, 'AWS::SQS::Queue').Properties;
      expect(queue).toMatchObject({ ...fifo, QueueName: `${PREFIX}-${names[key]}.fifo` });
      expect(queue.VisibilityTimeout).toBeGreaterThanOrEqual(6 * Math.max(...workerTimeouts()));
      expect(queue.RedrivePolicy).toEqual({
        deadLetterTargetArn: getAtt(`${pascal(key)}DeadLetterQueue`),
        maxReceiveCount: 5,
      });
    },
  );

  it.each(ALL_QUEUE_KEYS)(
    '%s DLQ: FIFO, 14 days, encrypted, redrive allowed from its source queue only',
    (key) => {
      const dlq = resource(`${pascal(key)}DeadLetterQueue`, 'AWS::SQS::Queue').Properties;
      expect(dlq).toMatchObject({ ...fifo, QueueName: `${PREFIX}-${names[key]}-dlq.fifo` });
      expect(dlq).not.toHaveProperty('RedrivePolicy');
      expect(dlq.RedriveAllowPolicy).toEqual({
        redrivePermission: 'byQueue',
        sourceQueueArns: [
          {
            'Fn::Sub': `arn:\${AWS::Partition}:sqs:\${AWS::Region}:\${AWS::AccountId}:${PREFIX}-${names[key]}.fifo`,
          },
        ],
      });
    },
  );
});

describe('what holds accepted deliveries', () => {
  it('every queue (DLQs and parked included) and every table outlives a stack removal and a replacement, on any stage', () => {
    const holders = [...ofType('AWS::SQS::Queue'), ...ofType('AWS::DynamoDB::Table')];
    expect(holders.map(([id]) => id).sort()).toEqual(
      [
        ...ALL_QUEUE_KEYS.flatMap((key) => [`${pascal(key)}Queue`, `${pascal(key)}DeadLetterQueue`]),
        ...TABLE_KEYS.map((key) => `${pascal(key)}Table`),
      ].sort(),
    );
    for (const [id, holder] of holders) {
      // A literal, not a condition: retained on dev as on prod.
      expect({
        id,
        DeletionPolicy: holder.DeletionPolicy,
        UpdateReplacePolicy: holder.UpdateReplacePolicy,
      }).toEqual({
        id,
        DeletionPolicy: 'Retain',
        UpdateReplacePolicy: 'Retain',
      });
    }
  });
});

describe('tables', () => {
  const keys = {
    rows: [{ AttributeName: 'rowKey', KeyType: 'HASH' }],
    events: [
      { AttributeName: 'rowKey', KeyType: 'HASH' },
      { AttributeName: 'seq', KeyType: 'RANGE' },
    ],
    webhooks: [
      { AttributeName: 'context', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ],
  };

  it('are three', () => {
    expect(ofType('AWS::DynamoDB::Table')).toHaveLength(3);
  });

  it.each(TABLE_KEYS)(
    '%s: on demand, fixed keys, point-in-time recovery, deletion protection on production stages',
    (key) => {
      const table = resource(`${pascal(key)}Table`, 'AWS::DynamoDB::Table').Properties;
      expect(table).toMatchObject({
        TableName: `${PREFIX}-${key}`,
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: keys[key],
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true, RecoveryPeriodInDays: 35 },
        DeletionProtectionEnabled: { 'Fn::If': ['IsProduction', true, false] },
      });
      expect(table).not.toHaveProperty('ProvisionedThroughput');
    },
  );

  it('events: no index by default (eventIdIndex "false": find by EventId scans); webhooks none either', () => {
    expect(template.Conditions?.HasEventIdIndex).toEqual({ 'Fn::Equals': ['false', 'true'] });
    const events = tableProperties('EventsTable');
    expect(events).not.toHaveProperty('GlobalSecondaryIndexes');
    expect(events.AttributeDefinitions).toEqual([
      { AttributeName: 'rowKey', AttributeType: 'S' },
      { AttributeName: 'seq', AttributeType: 'S' },
    ]);
    expect(resource('WebhooksTable').Properties).not.toHaveProperty('GlobalSecondaryIndexes');
  });

  it('rows: one index by (entity, context) and primary key, keys only (a reconcile finds deletes in it)', () => {
    const rows = resource('RowsTable').Properties;
    expect(rows.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: ROW_SET_INDEX,
        KeySchema: [
          { AttributeName: 'rowSet', KeyType: 'HASH' },
          { AttributeName: 'rowPk', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
    ]);
    expect(rows.AttributeDefinitions).toContainEqual({ AttributeName: 'rowPk', AttributeType: 'N' });
  });

  it('events with eventIdIndex "true": one index by EventId, keys only (the cheapest that says where an event went)', () => {
    expect(withFunctionUrl.Conditions?.HasEventIdIndex).toEqual({ 'Fn::Equals': ['true', 'true'] });
    const events = tableProperties('EventsTable', withFunctionUrl);
    expect(events.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: EVENT_ID_INDEX,
        KeySchema: [{ AttributeName: 'eventId', KeyType: 'HASH' }],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
    ]);
    expect(events.AttributeDefinitions).toContainEqual({ AttributeName: 'eventId', AttributeType: 'S' });
  });

  it('a stage that is not production: no deletion or termination protection, INFO logging, 30-day logs', () => {
    expect(template.Conditions?.IsProduction).toEqual({ 'Fn::Equals': ['false', 'true'] });
    expect(custom.terminationProtection).toBe(false);
    expect(custom.logLevel).toBe('INFO');
    expect(resource('IngestLogGroup').Properties.RetentionInDays).toBe(30);
  });

  it('events expire through the TTL attribute expiresAt; the other tables have no TTL', () => {
    expect(resource('EventsTable').Properties.TimeToLiveSpecification).toEqual({
      AttributeName: 'expiresAt',
      Enabled: true,
    });
    expect(resource('RowsTable').Properties).not.toHaveProperty('TimeToLiveSpecification');
    expect(resource('WebhooksTable').Properties).not.toHaveProperty('TimeToLiveSpecification');
  });
});

describe('IAM', () => {
  type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };
  const logs = ['logs:CreateLogStream', 'logs:PutLogEvents'];
  const consume = ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'];
  const allow = (Action: string | string[], Resource: unknown): Statement => ({
    Effect: 'Allow',
    Action,
    Resource,
  });

  /** UpdateItem in the webhooks table of the recovery item's attributes only (lib/store/recovery.ts). */
  const recoveryUpdate = (attributes: readonly string[]): Statement => ({
    ...allow('dynamodb:UpdateItem', getAtt('WebhooksTable')),
    Condition: {
      'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...attributes] },
      StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
    },
  });

  /** The three row workers' statements: only their own queue and log group differ. */
  const rowWorker = (name: string): Statement[] => [
    allow(logs, getAtt(`${name}WorkerLogGroup`)),
    allow(consume, getAtt(`${name}Queue`)),
    allow(['dynamodb:GetItem', 'dynamodb:PutItem'], getAtt('RowsTable')),
    allow(
      ['dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:UpdateItem'],
      getAtt('EventsTable'),
    ),
    allow('dynamodb:UpdateItem', getAtt('WebhooksTable')),
  ];

  const expected: Record<FunctionKey, Statement[]> = {
    ingest: [
      allow(logs, getAtt('IngestLogGroup')),
      allow('sqs:SendMessage', [
        getAtt('ContactQueue'),
        getAtt('ActivityQueue'),
        getAtt('WebhookStateQueue'),
        getAtt('EntitiesQueue'),
        getAtt('ParkedQueue'),
      ]),
      allow('ssm:GetParameter', {
        'Fn::Sub': `arn:\${AWS::Partition}:ssm:\${AWS::Region}:\${AWS::AccountId}:parameter/${SERVICE}/${STAGE}/webhook-secrets`,
      }),
    ],
    contactWorker: rowWorker('Contact'),
    activityWorker: rowWorker('Activity'),
    entitiesWorker: rowWorker('Entities'),
    webhookStateWorker: [
      allow(logs, getAtt('WebhookStateWorkerLogGroup')),
      allow(consume, getAtt('WebhookStateQueue')),
      allow(['dynamodb:GetItem', 'dynamodb:PutItem'], getAtt('WebhooksTable')),
      allow('sns:Publish', ref('AlertTopic')),
      allow(['kms:GenerateDataKey', 'kms:Decrypt'], getAtt('AlertTopicKey')),
      // A reconcile of each gap opened or closed.
      allow('sqs:SendMessage', getAtt('ReconcileQueue')),
    ],
    // Sends to the row queues and its own, never to webhook-state or parked; the ingest never to reconcile.
    reconcile: [
      allow(logs, getAtt('ReconcileLogGroup')),
      allow(consume, getAtt('ReconcileQueue')),
      // A request waiting for the CRM is hidden until its notBefore (FIFO: no per-message delay).
      allow('sqs:ChangeMessageVisibility', getAtt('ReconcileQueue')),
      allow('sqs:SendMessage', [
        getAtt('ContactQueue'),
        getAtt('ActivityQueue'),
        getAtt('EntitiesQueue'),
        getAtt('ReconcileQueue'),
      ]),
      // The stored rows: one by key (and its conditional put when a snapshot confirms it), and the keys
      // of a tenant's entity in the byRowSet index (finding deletes).
      allow(['dynamodb:GetItem', 'dynamodb:PutItem'], getAtt('RowsTable')),
      allow('dynamodb:Query', { 'Fn::Join': ['', [getAtt('RowsTable'), '/index/byRowSet']] }),
      // The context's last-accepted markers: the sender's clock a skew of the CRM's Date is measured against.
      allow('dynamodb:Query', getAtt('WebhooksTable')),
      // A run's state on its webhook's recovery item: UpdateItem of the attributes the store writes, no other.
      recoveryUpdate(RECOVERY_WRITE_ATTRIBUTES.reconcile),
      // The run last recorded there (a newer one of the same window supersedes a continuation): those attributes only.
      {
        ...allow('dynamodb:GetItem', getAtt('WebhooksTable')),
        Condition: {
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...RECOVERY_READ_ATTRIBUTES] },
          StringEquals: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
        },
      },
      allow('ssm:GetParameter', {
        'Fn::Sub': `arn:\${AWS::Partition}:ssm:\${AWS::Region}:\${AWS::AccountId}:parameter/${SERVICE}/${STAGE}/crm-credentials`,
      }),
    ],
    // The watch: its own #ops items and the names its deliveries carried, the reconcile queue only.
    reconcilePoll: [
      allow(logs, getAtt('ReconcilePollLogGroup')),
      allow('sqs:SendMessage', getAtt('ReconcileQueue')),
      allow(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Scan'], getAtt('WebhooksTable')),
      recoveryUpdate(RECOVERY_WRITE_ATTRIBUTES.reactivation),
      allow('ssm:GetParameter', {
        'Fn::Sub': `arn:\${AWS::Partition}:ssm:\${AWS::Region}:\${AWS::AccountId}:parameter/${SERVICE}/${STAGE}/crm-credentials`,
      }),
    ],
    // The tenant records and leases, and the secrets parameter: the one role that may write it.
    retireSecrets: [
      allow(logs, getAtt('RetireSecretsLogGroup')),
      allow(
        ['dynamodb:Scan', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
        getAtt('WebhooksTable'),
      ),
      allow(['ssm:GetParameter', 'ssm:PutParameter'], {
        'Fn::Sub': `arn:\${AWS::Partition}:ssm:\${AWS::Region}:\${AWS::AccountId}:parameter/${SERVICE}/${STAGE}/webhook-secrets`,
      }),
    ],
  };

  it.each(FUNCTIONS)('%s: a role Lambda alone can assume, with exactly the statements it needs', (key) => {
    const role = resource(`${pascal(key)}Role`, 'AWS::IAM::Role').Properties;
    expect(role.AssumeRolePolicyDocument).toEqual({
      Version: '2012-10-17',
      Statement: [
        { Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' }, Action: 'sts:AssumeRole' },
      ],
    });
    expect(role).not.toHaveProperty('ManagedPolicyArns');
    const policies = role.Policies as Array<{ PolicyDocument: { Statement: Statement[] } }>;
    expect(policies).toHaveLength(1);
    expect(policies[0]?.PolicyDocument.Statement).toEqual(expected[key]);
  });

  /**
   * Commands a bundle holds that its function never sends: they come with a module it shares (the
   * tables' adapters), and its role rightly does not grant them.
   */
  const bundledNotCalled: Record<FunctionKey, string[]> = {
    ingest: [],
    // The rows store's tenantRows: a tenant's erasure (ops and the local admin API), never a worker's.
    contactWorker: ['dynamodb:Scan'],
    activityWorker: ['dynamodb:Scan'],
    entitiesWorker: ['dynamodb:Scan'],
    // The webhooks table adapter's marker (UpdateItem), sender clock (Query) and watch scan (Scan).
    webhookStateWorker: ['dynamodb:Query', 'dynamodb:Scan', 'dynamodb:UpdateItem'],
    reconcile: ['dynamodb:Scan'],
    reconcilePoll: ['dynamodb:Query'],
    // The tenant store's get (a tenant command's read of one record); the sweep lists them.
    retireSecrets: ['dynamodb:GetItem'],
  };

  it.each(FUNCTIONS)(
    '%s: every action its role grants is one its bundle calls, and every call its bundle makes is granted',
    async (key) => {
      const roleId = `${pascal(key)}Role`;
      // What Lambda does with the role itself: the log stream, and an SQS event source's receive and delete.
      const fedBySqs = ofType('AWS::Lambda::EventSourceMapping').some(([, r]) =>
        JSON.stringify(r.Properties.FunctionName).includes(`${pascal(key)}LambdaFunction`),
      );
      const lambdas = new Set(fedBySqs ? consume : []);
      const granted = [...roleActions(template, roleId)].filter(
        (action) => CALLED_SERVICES.has(action.split(':')[0]!) && !lambdas.has(action),
      );
      const called = bundleActions(await bundleCode(key));
      expect(
        granted.filter((action) => !called.has(action)),
        'granted, never called',
      ).toEqual([]);
      expect([...called].filter((action) => !granted.includes(action)).sort(), 'called, not granted').toEqual(
        [...bundledNotCalled[key]].sort(),
      );
    },
  );

  it('no statement anywhere in the template grants a `*` resource or a wildcard action', () => {
    const statements: Statement[] = [];
    for (const [, r] of Object.entries(template.Resources)) {
      if (r.Type === 'AWS::IAM::Role') {
        for (const policy of (r.Properties.Policies ?? []) as Array<{
          PolicyDocument: { Statement: Statement[] };
        }>) {
          statements.push(...policy.PolicyDocument.Statement);
        }
      }
      if (r.Type === 'AWS::IAM::Policy' || r.Type === 'AWS::IAM::ManagedPolicy') {
        statements.push(...(r.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
      }
    }
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) {
      const resources = [statement.Resource].flat();
      expect(resources.length).toBeGreaterThan(0);
      for (const value of resources) {
        expect(value).not.toBe('*');
        if (typeof value === 'string') expect(value).not.toMatch(/:\*$|^arn:[^:]*:[^:]*:[^:]*:[^:]*:\*/);
      }
      for (const action of [statement.Action].flat()) expect(action).not.toMatch(/\*/);
    }
  });
});

describe('alarms and alerts', () => {
  const alarms = () => ofType('AWS::CloudWatch::Alarm').map(([, r]) => r.Properties);
  const alarmOn = (metric: string, dimension: unknown) =>
    alarms().filter(
      (a) => a.MetricName === metric && JSON.stringify(a.Dimensions).includes(JSON.stringify(dimension)),
    );

  it('an SNS alert topic, with an e-mail subscription only when alertEmail is given', () => {
    expect(resource('AlertTopic', 'AWS::SNS::Topic').Properties.TopicName).toBe(`${PREFIX}-alerts`);
    const subscription = resource('AlertEmailSubscription', 'AWS::SNS::Subscription');
    expect(subscription.Condition).toBe('HasAlertEmail');
    expect(subscription.Properties).toMatchObject({ Protocol: 'email', TopicArn: ref('AlertTopic') });
    expect(template.Conditions?.HasAlertEmail).toEqual({ 'Fn::Not': [{ 'Fn::Equals': ['', ''] }] });
  });

  it('the alert topic is encrypted with its own rotated key, which the stack’s alarms may use to publish', () => {
    expect(resource('AlertTopic').Properties.KmsMasterKeyId).toEqual(getAtt('AlertTopicKey'));
    const key = resource('AlertTopicKey', 'AWS::KMS::Key').Properties;
    expect(key.EnableKeyRotation).toBe(true);
    type KeyStatement = { Principal: unknown; Action: unknown; Resource: unknown; Condition?: unknown };
    const statements = (key.KeyPolicy as { Statement: KeyStatement[] }).Statement;
    const [admin, cloudWatch, ...others] = statements;
    expect(others).toEqual([]);
    expect(admin).toMatchObject({
      Effect: 'Allow',
      Principal: { AWS: { 'Fn::Sub': `arn:\${AWS::Partition}:iam::\${AWS::AccountId}:root` } },
      Action: 'kms:*',
    });
    // The AWS managed key aws/sns would refuse CloudWatch: alarms need a statement of their own.
    const alarmArns = `arn:\${AWS::Partition}:cloudwatch:\${AWS::Region}:\${AWS::AccountId}:alarm:${PREFIX}-*`;
    expect(cloudWatch).toEqual({
      Sid: expect.any(String),
      Effect: 'Allow',
      Principal: { Service: 'cloudwatch.amazonaws.com' },
      Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      Resource: '*',
      Condition: {
        StringEquals: { 'aws:SourceAccount': ref('AWS::AccountId') },
        ArnLike: { 'aws:SourceArn': { 'Fn::Sub': alarmArns } },
      },
    });
    // Every alarm that publishes to the topic falls under that condition.
    for (const alarm of alarms()) expect(alarm.AlarmName as string).toMatch(new RegExp(`^${PREFIX}-`));
    expect(resource('AlertTopicKeyAlias', 'AWS::KMS::Alias').Properties).toEqual({
      AliasName: `alias/${PREFIX}-alerts`,
      TargetKeyId: ref('AlertTopicKey'),
    });
  });

  it('without kmsKeyArn the queues, tables and bus keep AWS owned keys, and the only kms grant is the alert topic key’s', () => {
    for (const [id, r] of Object.entries(template.Resources)) {
      if (r.Type === 'AWS::SQS::Queue') expect(r.Properties.SqsManagedSseEnabled, id).toBe(true);
      for (const property of ['KmsMasterKeyId', 'SSESpecification', 'KmsKeyIdentifier'])
        if (id !== 'AlertTopic') expect(r.Properties, id).not.toHaveProperty(property);
    }
    const kmsGrants = JSON.stringify(template.Resources).match(/"kms:[A-Za-z*]+"/g) ?? [];
    // The alert topic key's policy (kms:*, and CloudWatch's two) and the webhook-state worker's use of it.
    expect(kmsGrants.sort()).toEqual(
      ['"kms:*"', '"kms:Decrypt"', '"kms:GenerateDataKey*"', '"kms:GenerateDataKey"', '"kms:Decrypt"'].sort(),
    );
  });

  it('every alarm notifies the alert topic', () => {
    expect(alarms().length).toBeGreaterThanOrEqual(11);
    for (const alarm of alarms()) {
      expect(alarm.AlarmActions).toEqual([ref('AlertTopic')]);
      expect(alarm.TreatMissingData).toBe('notBreaching');
    }
  });

  it.each(ALL_QUEUE_KEYS)('%s DLQ: alarm on more than 0 messages', (key) => {
    const found = alarmOn(
      'ApproximateNumberOfMessagesVisible',
      getAtt(`${pascal(key)}DeadLetterQueue`, 'QueueName'),
    );
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      Namespace: 'AWS/SQS',
    });
  });

  it('parked queue: alarm on more than 0 messages', () => {
    const found = alarmOn('ApproximateNumberOfMessagesVisible', getAtt('ParkedQueue', 'QueueName'));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold' });
  });

  it('ingest 5xx answers on the HTTP API', () => {
    const found = alarmOn('5xx', { Name: 'ApiId', Value: ref('HttpApi') });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ Namespace: 'AWS/ApiGateway', Statistic: 'Sum', Threshold: 0 });
  });

  it('ingest 5xx answers on the function URL, when there is one', () => {
    const found = alarmOn('Url5xxCount', { Name: 'FunctionName', Value: ref('IngestLambdaFunction') });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ Namespace: 'AWS/Lambda', Statistic: 'Sum', Threshold: 0 });
    expect(found[0]?.TreatMissingData).toBe('notBreaching');
  });

  it.each(['ContactQueue', 'ActivityQueue', 'EntitiesQueue', 'WebhookStateQueue'])(
    '%s: age of the oldest message',
    (queue) => {
      const found = alarmOn('ApproximateAgeOfOldestMessage', getAtt(queue, 'QueueName'));
      expect(found).toHaveLength(1);
      expect(found[0]?.Threshold).toBeGreaterThan(0);
    },
  );

  it('a reconciliation that gave up, from the receiver’s own metrics (ReconcileFailed)', () => {
    const found = alarmOn('ReconcileFailed', { Name: 'service', Value: SERVICE });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ Namespace: 'CrmWebhookReceiver', Statistic: 'Sum', Threshold: 0 });
  });

  it('a webhook the poll could not set Active again, from the receiver’s own metrics', () => {
    const found = alarmOn('WebhookNotReactivated', { Name: 'service', Value: SERVICE });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ Namespace: 'CrmWebhookReceiver', Statistic: 'Sum', Threshold: 0 });
  });

  it('the poll of the CRM’s webhooks and the retirement of due secrets run every minute (AWS’s finest schedule), for longer than a minute', () => {
    const rules = ofType('AWS::Events::Rule').filter(
      ([, r]) => r.Properties.ScheduleExpression !== undefined,
    );
    expect(rules.map(([, r]) => [r.Properties.ScheduleExpression, r.Properties.Targets])).toEqual([
      ['rate(1 minute)', [expect.objectContaining({ Arn: getAtt('ReconcilePollLambdaFunction') })]],
      ['rate(1 minute)', [expect.objectContaining({ Arn: getAtt('RetireSecretsLambdaFunction') })]],
    ]);
    expect(fn('reconcilePoll').Properties.Timeout).toBeGreaterThan(60);
    // The secret set's lease (LEASE_MS), held or left by a crash, is waited for up to 60 s.
    expect(fn('retireSecrets').Properties.Timeout).toBeGreaterThan(60);
    expect((fn('retireSecrets').Properties.Environment as { Variables: unknown }).Variables).toMatchObject({
      WEBHOOKS_TABLE: ref('WebhooksTable'),
      WEBHOOK_SECRETS_PARAMETER: `/${SERVICE}/${STAGE}/webhook-secrets`,
    });
  });

  it('a webhook entering TooManyErrors, from the receiver’s own metrics', () => {
    const found = alarmOn('WebhookTooManyErrors', { Name: 'service', Value: SERVICE });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ Namespace: 'CrmWebhookReceiver', Statistic: 'Sum', Threshold: 0 });
  });

  it('failed authentications above a threshold, not every rejection (scanners’ 405s and 400s do not count)', () => {
    expect(alarms().filter((a) => a.MetricName === 'Refused')).toEqual([]);
    const alarm = resource('IngestSignatureFailuresAlarm', 'AWS::CloudWatch::Alarm').Properties;
    expect(alarm).toMatchObject({
      AlarmName: `${PREFIX}-ingest-signature-failures`,
      EvaluationPeriods: 1,
      Threshold: 5,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    type Query = {
      Id: string;
      Expression?: string;
      ReturnData: boolean;
      MetricStat?: Record<string, unknown>;
    };
    const [sum, ...series] = alarm.Metrics as Query[];
    expect(sum).toMatchObject({
      ReturnData: true,
      Expression: expect.stringMatching(/^SUM\(\[FILL\(r0, 0\)/),
    });
    expect(series.map((query) => query.MetricStat)).toEqual(
      AUTHENTICATION_FAILURES.map((reason) => ({
        Metric: {
          Namespace: 'CrmWebhookReceiver',
          MetricName: 'RefusedByReason',
          Dimensions: [
            { Name: 'service', Value: SERVICE },
            { Name: 'reason', Value: reason },
          ],
        },
        Period: 900,
        Stat: 'Sum',
      })),
    );
    for (const [i, query] of series.entries()) {
      expect(query).toMatchObject({ Id: `r${i}`, ReturnData: false });
      expect(sum?.Expression).toContain(`FILL(r${i}, 0)`);
    }
  });

  it.each(FUNCTIONS)('%s: Lambda errors and throttles', (key) => {
    for (const metric of ['Errors', 'Throttles']) {
      const found = alarmOn(metric, { Name: 'FunctionName', Value: ref(`${pascal(key)}LambdaFunction`) });
      expect(found, metric).toHaveLength(1);
      expect(found[0]).toMatchObject({
        Namespace: 'AWS/Lambda',
        Statistic: 'Sum',
        Threshold: 0,
        Period: 300,
      });
    }
  });

  it('Lambda errors and throttles of every function, and of nothing else', () => {
    for (const metric of ['Errors', 'Throttles']) {
      const named = alarms()
        .filter((a) => a.Namespace === 'AWS/Lambda' && a.MetricName === metric)
        .map((a) => JSON.stringify(a.Dimensions));
      expect(named.sort()).toEqual(
        ofType('AWS::Lambda::Function')
          .map(([id]) => JSON.stringify([{ Name: 'FunctionName', Value: ref(id) }]))
          .sort(),
      );
    }
  });

  it.each(TABLE_KEYS)('%s table: DynamoDB read and write throttles (its indexes’ too)', (key) => {
    const alarm = resource(`${pascal(key)}TableThrottlesAlarm`, 'AWS::CloudWatch::Alarm').Properties;
    expect(alarm).toMatchObject({ AlarmName: `${PREFIX}-${key}-table-throttles`, Threshold: 0 });
    type Query = {
      Expression?: string;
      MetricStat?: { Metric: { MetricName: string; Dimensions: unknown[] } };
    };
    const [sum, ...series] = alarm.Metrics as Query[];
    const indexes = (tableProperties(`${pascal(key)}Table`).GlobalSecondaryIndexes ?? []) as Array<{
      IndexName: string;
    }>;
    expect(series.map((query) => query.MetricStat?.Metric)).toEqual([
      {
        Namespace: 'AWS/DynamoDB',
        MetricName: 'ReadThrottleEvents',
        Dimensions: [{ Name: 'TableName', Value: ref(`${pascal(key)}Table`) }],
      },
      {
        Namespace: 'AWS/DynamoDB',
        MetricName: 'WriteThrottleEvents',
        Dimensions: [{ Name: 'TableName', Value: ref(`${pascal(key)}Table`) }],
      },
      ...indexes.map((index) => ({
        Namespace: 'AWS/DynamoDB',
        MetricName: 'WriteThrottleEvents',
        Dimensions: [
          { Name: 'TableName', Value: ref(`${pascal(key)}Table`) },
          { Name: 'GlobalSecondaryIndexName', Value: index.IndexName },
        ],
      })),
    ]);
    expect(sum?.Expression).toBe(`SUM([${series.map((_, i) => `FILL(t${i}, 0)`).join(', ')}])`);
  });

  it('no heartbeat unless heartbeatHours is set', () => {
    expect(template.Resources).not.toHaveProperty('IngestHeartbeatAlarm');
  });
});

describe('outputs', () => {
  it('the webhook URL, queue URLs, DLQ ARNs, table names and the alert topic', () => {
    expect(template.Outputs.WebhookUrl?.Value).toEqual({
      'Fn::Join': ['', [getAtt('HttpApi', 'ApiEndpoint'), '/webhook']],
    });
    for (const key of ALL_QUEUE_KEYS) {
      expect(template.Outputs[`${pascal(key)}QueueUrl`]?.Value).toEqual(ref(`${pascal(key)}Queue`));
      expect(template.Outputs[`${pascal(key)}DeadLetterQueueUrl`]?.Value).toEqual(
        ref(`${pascal(key)}DeadLetterQueue`),
      );
      expect(template.Outputs[`${pascal(key)}DeadLetterQueueArn`]?.Value).toEqual(
        getAtt(`${pascal(key)}DeadLetterQueue`),
      );
    }
    for (const key of TABLE_KEYS) {
      expect(template.Outputs[`${pascal(key)}TableName`]?.Value).toEqual(ref(`${pascal(key)}Table`));
    }
    expect(template.Outputs.AlertTopicArn?.Value).toEqual(ref('AlertTopic'));
  });

  it('the ingest’s decision settings, as the tests of `ops replay-parked` give them, and no secret', () => {
    const value = template.Outputs.IngestSettings?.Value;
    expect(value).toBe(outputs().find((output) => output.OutputKey === 'IngestSettings')?.OutputValue);
    const settings = JSON.parse(value as string) as Record<string, string>;
    expect(settings).not.toHaveProperty('STATE_EVENT_TOKEN');
    const env = (fn('ingest').Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(env).toMatchObject(settings);
  });
});

describe('the local runtime’s definitions', () => {
  it('equal the deployed queues', () => {
    const { queues } = loadDefinitions({ stage: STAGE });
    for (const queue of queues) {
      const deployed = resource(queue.logicalId).Properties;
      const deployedDlq = resource(queue.dlq.logicalId).Properties;
      expect(queue.name).toBe(deployed.QueueName);
      expect(queue.dlq.name).toBe(deployedDlq.QueueName);
      expect(queue.dlq.maxReceiveCount).toBe(
        (deployed.RedrivePolicy as { maxReceiveCount: number }).maxReceiveCount,
      );
      expect(queue.fifo).toBe(deployed.FifoQueue);
      expect(queue.visibilityTimeout).toBe(deployed.VisibilityTimeout);
      expect(queue.messageRetentionPeriod).toBe(deployed.MessageRetentionPeriod);
      expect(queue.attributes).toEqual(asAttributes(deployed, ['QueueName', 'RedrivePolicy']));
      expect(queue.dlq.attributes).toEqual(asAttributes(deployedDlq, ['QueueName', 'RedriveAllowPolicy']));
      expect(fn(queue.key === 'reconcile' ? 'reconcile' : 'ingest').Properties.Environment).toMatchObject({
        Variables: { [queue.envVar]: ref(queue.logicalId) },
      });
    }
  });

  it.each([
    ['by default', false],
    ['with eventIdIndex "true"', true],
  ])('equal the deployed tables %s', (_, eventIdIndex) => {
    const t = eventIdIndex ? withFunctionUrl : template;
    const { tables } = loadDefinitions({ stage: STAGE, eventIdIndex });
    expect(tables.map((table) => table.key)).toEqual(['rows', 'events', 'webhooks']);
    for (const table of tables) {
      const deployed = tableProperties(table.logicalId, t);
      expect(table.createTableInput).toEqual({
        TableName: deployed.TableName,
        AttributeDefinitions: deployed.AttributeDefinitions,
        KeySchema: deployed.KeySchema,
        BillingMode: deployed.BillingMode,
        // The events table's EventId index: local tables get it from the same definition.
        ...(deployed.GlobalSecondaryIndexes !== undefined && {
          GlobalSecondaryIndexes: deployed.GlobalSecondaryIndexes,
        }),
      });
      expect(table.ttlAttribute).toBe(
        (deployed.TimeToLiveSpecification as { AttributeName?: string } | undefined)?.AttributeName,
      );
      expect(fn('contactWorker').Properties.Environment).toMatchObject({
        Variables: { [table.envVar]: ref(table.logicalId) },
      });
    }
  });
});

describe('bundles', () => {
  it.each(FUNCTIONS)(
    '%s: one minified ESM file within its budget (350 KB; 400 KB off the delivery path)',
    async (key) => {
      const size = await bundleSize(key);
      expect(size).toBeGreaterThan(10_000);
      expect(size).toBeLessThanOrEqual(budgetOf(key));
    },
  );

  it.each(FUNCTIONS)('%s: the zip holds the bundle alone, no source map', async (key) => {
    // Entry names are stored as plain text in a zip (local headers and central directory).
    const zip = await readFile(zipPath(key));
    expect(zip.includes(`${ENTRIES[key]}.mjs`)).toBe(true);
    expect(zip.includes('.map')).toBe(false);
    expect(zip.length).toBeLessThan(budgetOf(key));
  });

  it('the AWS SDK is bundled, with the environment as the only credential source', async () => {
    for (const key of FUNCTIONS) {
      const code = await bundleCode(key);
      expect(code, key).toMatch(/^import \{ createRequire \} from 'module';/);
      expect(code, key).not.toMatch(/from\s*["']@aws-sdk\//);
      expect(code, key).not.toContain('credential-provider-sso');
      expect(code, key).toContain('AWS_SECRET_ACCESS_KEY');
    }
  });

  /** Runs `script` (an ES module body; `bundle` is the imported function) in a fresh Node process. */
  const runWithBundle = (key: FunctionKey, script: string, env: Record<string, string> = {}): string =>
    execFileSync(
      process.execPath,
      [
        '--no-warnings',
        '--input-type=module',
        '-e',
        `const bundle = await import(${JSON.stringify(bundlePath(key))});\n${script}`,
      ],
      { env: { ...process.env, ...IMPORT_ENV, ...env }, encoding: 'utf8' },
    ).trim();

  it('the ingest bundle explains a refusal with zod’s issues', () => {
    const body = { ...buildSampleBody('contact.created', { context: 'CustZ' }), PrimaryKey: 1.5 };
    const event = sampleHttpApiEvent(buildSampleDelivery(body));
    const answer = runWithBundle(
      'ingest',
      `const result = await bundle.handler(${JSON.stringify(event)});
       console.log(JSON.stringify({ status: result.statusCode, body: JSON.parse(result.body) }));`,
      // Unsigned and admitted, so that nothing reaches SQS: the answer is the refusal itself.
      {
        WEBHOOK_SECRET: '',
        WEBHOOK_SECRETS_PARAMETER: '',
        ALLOW_UNSIGNED: 'true',
        POWERTOOLS_LOG_LEVEL: 'SILENT',
      },
    );
    expect(JSON.parse(answer.split('\n').pop()!)).toEqual({
      status: 400,
      body: expect.objectContaining({ detail: expect.stringContaining('PrimaryKey') }),
    });
  });
});

/** The CloudFormation properties of a queue as SQS CreateQueue attributes (strings). */
function asAttributes(properties: Record<string, unknown>, without: string[]): Record<string, string> {
  return Object.fromEntries(
    Object.entries(properties)
      .filter(([name]) => !without.includes(name))
      .map(([name, value]) => [name, String(value)]),
  );
}

describe('ingest function URL (ingestFunctionUrl parameter)', () => {
  const ofTypeIn = (t: Template, type: string) =>
    Object.entries(t.Resources).filter(([, r]) => r.Type === type);

  it('is absent by default: the HTTP API is the only endpoint', () => {
    expect(ofTypeIn(template, 'AWS::Lambda::Url')).toEqual([]);
    expect(
      ofTypeIn(template, 'AWS::Lambda::Permission').filter(([, r]) => r.Properties.Principal === '*'),
    ).toEqual([]);
  });

  it('with "true": a public URL on the ingest, both invoke permissions, an output, the HTTP API kept', () => {
    const urls = ofTypeIn(withFunctionUrl, 'AWS::Lambda::Url');
    expect(urls).toHaveLength(1);
    expect(urls[0]![1].Properties).toMatchObject({
      AuthType: 'NONE',
      TargetFunctionArn: getAtt('IngestLambdaFunction'),
    });
    const publicPermissions = ofTypeIn(withFunctionUrl, 'AWS::Lambda::Permission')
      .map(([, r]) => r.Properties)
      .filter((p) => p.Principal === '*');
    expect(publicPermissions.map((p) => p.Action).sort()).toEqual([
      'lambda:InvokeFunction',
      'lambda:InvokeFunctionUrl',
    ]);
    for (const permission of publicPermissions) {
      expect(permission.FunctionName).toEqual(getAtt('IngestLambdaFunction'));
    }
    expect(withFunctionUrl.Outputs.IngestLambdaFunctionUrl?.Value).toEqual(
      getAtt('IngestLambdaFunctionUrl', 'FunctionUrl'),
    );
    expect(withFunctionUrl.Resources.HttpApi?.Type).toBe('AWS::ApiGatewayV2::Api');
    // Nothing else differs: the same roles, queues, tables and alarms.
    const others = (t: Template) =>
      Object.keys(t.Resources)
        .filter((id) => !/^IngestLambda(FunctionUrl|PermissionFn(Url)?)$/.test(id))
        .sort();
    expect(others(withFunctionUrl)).toEqual(others(template));
  });
});

describe('the deployer policy (infra/deployer-policy.json)', () => {
  it('grants every action CloudFormation needs for this template’s resources', () => {
    expect(missingPermissions(template)).toEqual([]);
  });
});
