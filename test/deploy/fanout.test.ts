import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishEvents, subscriptionResources } from '../../infra/subscriptions.js';
import { loadSubscriptions } from '../../lib/bus/subscriptions.js';
import { missingPermissions } from './deployer-policy.js';
import { packageStack, type Resource, ROOT, STAGE, type Template } from './package.js';

const FILE = 'test/deploy/fanout-subscriptions.yml';
const PREFIX = `crm-webhook-receiver-${STAGE}`;
const WORKERS = ['ContactWorker', 'ActivityWorker', 'EntitiesWorker', 'WebhookStateWorker'];
const SUBSCRIPTIONS = {
  'department-changes': 'DepartmentChanges',
  audit: 'Audit',
  'sales-sold': 'SalesSold',
  'contacts-deleted': 'ContactsDeleted',
};
const getAtt = (logicalId: string, attribute = 'Arn') => ({ 'Fn::GetAtt': [logicalId, attribute] });
const ref = (logicalId: string) => ({ Ref: logicalId });

let template: Template;
const DIR = join(tmpdir(), `crm-fanout-${process.pid}`);

interface Statement {
  Action: unknown;
  Resource: unknown;
}
interface PolicyDocument {
  Statement: Statement[];
}

beforeAll(async () => {
  ({ template } = await packageStack({}, DIR, { SUBSCRIPTIONS_FILE: FILE }));
}, 600_000);
afterAll(() => rmSync(DIR, { recursive: true, force: true }));

function resource(logicalId: string, type: string): Resource {
  const found = template.Resources[logicalId];
  if (!found) throw new Error(`no resource ${logicalId} in the template`);
  expect(found.Type).toBe(type);
  return found;
}

function rule(name: keyof typeof SUBSCRIPTIONS) {
  const { Properties } = resource(`${SUBSCRIPTIONS[name]}SubscriptionRule`, 'AWS::Events::Rule');
  const [target, ...others] = Properties.Targets as Array<Record<string, unknown>>;
  expect(others).toEqual([]);
  return { properties: Properties, target: target! };
}

/** Every statement of every IAM policy and queue policy in the template. */
function statements(): Statement[] {
  return Object.values(template.Resources).flatMap((r) => {
    const p = r.Properties as {
      PolicyDocument?: PolicyDocument;
      Policies?: Array<{ PolicyDocument: PolicyDocument }>;
    };
    const documents = [p.PolicyDocument, ...(p.Policies ?? []).map((x) => x.PolicyDocument)];
    return documents.flatMap((d) => d?.Statement ?? []);
  });
}

describe('the event bus', () => {
  it('is one custom bus per stage, named in the outputs', () => {
    expect(resource('EventBus', 'AWS::Events::EventBus').Properties).toEqual({ Name: PREFIX });
    expect(template.Outputs.EventBusName?.Value).toEqual(ref('EventBus'));
    expect(template.Outputs.EventBusArn?.Value).toEqual(getAtt('EventBus'));
  });

  it('has a redrive bus beside it, which no function may put events on', () => {
    expect(resource('RedriveBus', 'AWS::Events::EventBus').Properties).toEqual({ Name: `${PREFIX}-redrive` });
    expect(template.Outputs.RedriveBusName?.Value).toEqual(ref('RedriveBus'));
    expect(JSON.stringify(statements())).not.toContain('RedriveBus');
  });

  it('only the four workers and the reconcile and poll functions (their lifecycle events) may put events, on that bus only', () => {
    const policy = resource('PublishEventsPolicy', 'AWS::IAM::Policy').Properties;
    expect(policy.Roles).toEqual([...WORKERS, 'Reconcile', 'ReconcilePoll'].map((w) => ref(`${w}Role`)));
    const putEvents = statements().filter((s) => JSON.stringify(s.Action).includes('events:PutEvents'));
    expect(putEvents).toEqual([
      { Effect: 'Allow', Action: 'events:PutEvents', Resource: getAtt('EventBus') },
    ]);
  });

  it('gives the workers and the reconcile function, and only them, the bus variables; subscriptions turn publishing on', () => {
    for (const worker of WORKERS) {
      expect(resource(`${worker}LambdaFunction`, 'AWS::Lambda::Function').Properties).toMatchObject({
        Environment: {
          Variables: {
            EVENT_BUS_NAME: ref('EventBus'),
            PUBLISH_EVENTS: 'true',
            PUBLISH_ECHOES: 'false',
            BOOKKEEPING_FIELDS: '',
          },
        },
      });
    }
    // The reconcile and poll functions publish lifecycle events only: no echoes, no bookkeeping fields.
    for (const fn of ['ReconcileLambdaFunction', 'ReconcilePollLambdaFunction'])
      expect(resource(fn, 'AWS::Lambda::Function').Properties).toMatchObject({
        Environment: { Variables: { EVENT_BUS_NAME: ref('EventBus'), PUBLISH_EVENTS: 'true' } },
      });
    const ingest = resource('IngestLambdaFunction', 'AWS::Lambda::Function').Properties;
    expect(JSON.stringify(ingest)).not.toContain('EVENT_BUS_NAME');
  });

  it('names no resource * in any policy it adds', () => {
    for (const { Resource } of statements()) expect(JSON.stringify(Resource)).not.toBe('"*"');
  });
});

describe('each subscription', () => {
  const subscriptions = loadSubscriptions({ root: ROOT, mode: 'aws', env: { SUBSCRIPTIONS_FILE: FILE } });

  it.each(subscriptions.map((s) => [s.name, s] as const))(
    '%s: a rule on the bus with its pattern, retry policy, DLQ and alarms',
    (name, subscription) => {
      const id = `${SUBSCRIPTIONS[name as keyof typeof SUBSCRIPTIONS]}Subscription`;
      const { properties, target } = rule(name as keyof typeof SUBSCRIPTIONS);
      expect(properties).toMatchObject({
        Name: `${PREFIX}-${name}`,
        EventBusName: ref('EventBus'),
        EventPattern: subscription.pattern,
        State: 'ENABLED',
      });
      expect(target.RetryPolicy).toEqual({
        MaximumRetryAttempts: subscription.retry.attempts,
        MaximumEventAgeInSeconds: subscription.retry.maxAgeSeconds,
      });
      expect(target.DeadLetterConfig).toEqual({ Arn: getAtt(`${id}DeadLetterQueue`) });
      expect(resource(`${id}DeadLetterQueue`, 'AWS::SQS::Queue').Properties).toMatchObject({
        QueueName: `${PREFIX}-${name}-dlq`,
        MessageRetentionPeriod: 1_209_600,
      });
      expect(resource(`${id}DeadLetterQueueAlarm`, 'AWS::CloudWatch::Alarm').Properties).toMatchObject({
        AlarmName: `${PREFIX}-${name}-dlq-not-empty`,
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: getAtt(`${id}DeadLetterQueue`, 'QueueName') }],
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        AlarmActions: [ref('AlertTopic')],
      });
      // The rule's own failures: given up on (to the DLQ), and not even put in the DLQ (lost).
      for (const [suffix, metric, alarmName] of [
        ['FailedInvocationsAlarm', 'FailedInvocations', 'failed-invocations'],
        ['DeadLetterFailuresAlarm', 'InvocationsFailedToBeSentToDlq', 'dlq-send-failed'],
      ] as const) {
        expect(resource(`${id}${suffix}`, 'AWS::CloudWatch::Alarm').Properties).toEqual({
          AlarmName: `${PREFIX}-${name}-${alarmName}`,
          AlarmDescription: expect.any(String),
          Namespace: 'AWS/Events',
          MetricName: metric,
          Dimensions: [
            { Name: 'EventBusName', Value: ref('EventBus') },
            { Name: 'RuleName', Value: `${PREFIX}-${name}` },
          ],
          Statistic: 'Sum',
          Period: 300,
          EvaluationPeriods: 1,
          Threshold: 0,
          ComparisonOperator: 'GreaterThanThreshold',
          TreatMissingData: 'notBreaching',
          AlarmActions: [ref('AlertTopic')],
          OKActions: [ref('AlertTopic')],
        });
      }
      const policy = resource(`${id}QueuePolicy`, 'AWS::SQS::QueuePolicy').Properties as {
        Queues: Array<{ Ref: string }>;
        PolicyDocument: PolicyDocument;
      };
      expect(policy.PolicyDocument.Statement).toEqual([
        {
          Effect: 'Allow',
          Principal: { Service: 'events.amazonaws.com' },
          Action: 'sqs:SendMessage',
          Resource: policy.Queues.map((q: { Ref: string }) => getAtt(q.Ref)),
          Condition: { ArnEquals: { 'aws:SourceArn': [getAtt(`${id}Rule`), getAtt(`${id}RedriveRule`)] } },
        },
      ]);
      expect(policy.Queues).toContainEqual(ref(`${id}DeadLetterQueue`));
      expect(template.Outputs[`${id}DeadLetterQueueUrl`]?.Value).toEqual(ref(`${id}DeadLetterQueue`));
    },
  );

  it.each(subscriptions.map((s) => [s.name, s] as const))(
    '%s: its queues are retained, as every queue of the stack (removal keeps their messages)',
    (name) => {
      const id = `${SUBSCRIPTIONS[name as keyof typeof SUBSCRIPTIONS]}Subscription`;
      const queues = Object.entries(template.Resources).filter(
        ([logicalId, r]) => r.Type === 'AWS::SQS::Queue' && logicalId.startsWith(id),
      );
      expect(queues.length).toBeGreaterThanOrEqual(1);
      for (const [logicalId, queue] of queues) {
        expect(queue.DeletionPolicy, logicalId).toBe('Retain');
        expect(queue.UpdateReplacePolicy, logicalId).toBe('Retain');
      }
    },
  );

  it.each(subscriptions.map((s) => [s.name, s] as const))(
    '%s: a redrive rule on the redrive bus, for events naming its rule, with the same target',
    (name) => {
      const id = `${SUBSCRIPTIONS[name as keyof typeof SUBSCRIPTIONS]}Subscription`;
      const main = rule(name as keyof typeof SUBSCRIPTIONS).properties;
      const redrive = resource(`${id}RedriveRule`, 'AWS::Events::Rule').Properties;
      expect(redrive).toEqual({
        Name: `${PREFIX}-${name}`,
        Description: expect.any(String),
        EventBusName: ref('RedriveBus'),
        EventPattern: { resources: [getAtt(`${id}Rule`)] },
        State: 'ENABLED',
        Targets: main.Targets,
      });
    },
  );

  it('url: an API destination through a connection whose API key header comes from SSM', () => {
    const { target } = rule('department-changes');
    expect(target).toMatchObject({
      Arn: getAtt('DepartmentChangesSubscriptionApiDestination'),
      RoleArn: getAtt('DepartmentChangesSubscriptionRole'),
    });
    expect(resource('DepartmentChangesSubscriptionConnection', 'AWS::Events::Connection').Properties).toEqual(
      {
        Name: `${PREFIX}-department-changes`,
        AuthorizationType: 'API_KEY',
        AuthParameters: {
          ApiKeyAuthParameters: {
            ApiKeyName: 'X-Api-Key',
            ApiKeyValue: '{{resolve:ssm:/crm/department-key}}',
          },
        },
      },
    );
    expect(
      resource('DepartmentChangesSubscriptionApiDestination', 'AWS::Events::ApiDestination').Properties,
    ).toEqual({
      Name: `${PREFIX}-department-changes`,
      ConnectionArn: getAtt('DepartmentChangesSubscriptionConnection'),
      InvocationEndpoint: 'https://example.com/crm/department',
      HttpMethod: 'POST',
    });
    const role = resource('DepartmentChangesSubscriptionRole', 'AWS::IAM::Role').Properties as {
      AssumeRolePolicyDocument: PolicyDocument;
      Policies: Array<{ PolicyDocument: PolicyDocument }>;
    };
    expect(role.AssumeRolePolicyDocument.Statement).toEqual([
      { Effect: 'Allow', Principal: { Service: 'events.amazonaws.com' }, Action: 'sts:AssumeRole' },
    ]);
    expect(role.Policies.flatMap((p) => p.PolicyDocument.Statement)).toEqual([
      {
        Effect: 'Allow',
        Action: 'events:InvokeApiDestination',
        Resource: getAtt('DepartmentChangesSubscriptionApiDestination'),
      },
    ]);
  });

  it('url without auth: the connection sends the subscription name in X-Crm-Subscription', () => {
    expect(resource('AuditSubscriptionConnection', 'AWS::Events::Connection').Properties).toMatchObject({
      AuthParameters: { ApiKeyAuthParameters: { ApiKeyName: 'X-Crm-Subscription', ApiKeyValue: 'audit' } },
    });
  });

  it('queue: a queue the stack creates, open to that rule only, its URL in the outputs', () => {
    expect(rule('sales-sold').target.Arn).toEqual(getAtt('SalesSoldSubscriptionQueue'));
    expect(resource('SalesSoldSubscriptionQueue', 'AWS::SQS::Queue').Properties).toMatchObject({
      QueueName: `${PREFIX}-sales-sold`,
    });
    expect(resource('SalesSoldSubscriptionQueuePolicy', 'AWS::SQS::QueuePolicy').Properties.Queues).toEqual([
      ref('SalesSoldSubscriptionDeadLetterQueue'),
      ref('SalesSoldSubscriptionQueue'),
    ]);
    expect(template.Outputs.SalesSoldSubscriptionQueueUrl?.Value).toEqual(ref('SalesSoldSubscriptionQueue'));
  });

  it('lambda: the function invoked directly, with a permission for that rule and its redrive rule only', () => {
    const arn = 'arn:aws:lambda:eu-west-1:123456789012:function:contact-cleanup';
    expect(rule('contacts-deleted').target.Arn).toBe(arn);
    for (const rule of ['Rule', 'RedriveRule']) {
      const permission = `ContactsDeletedSubscription${rule.replace('Rule', 'Permission')}`;
      expect(resource(permission, 'AWS::Lambda::Permission').Properties).toEqual({
        Action: 'lambda:InvokeFunction',
        FunctionName: arn,
        Principal: 'events.amazonaws.com',
        SourceArn: getAtt(`ContactsDeletedSubscription${rule}`),
      });
    }
  });
});

describe('without subscriptions', () => {
  it('keeps the bus and its policy, and publishes only when publishEvents is "true"', () => {
    const { Resources } = subscriptionResources([], { service: 'crm-webhook-receiver', stage: STAGE });
    expect(Object.keys(Resources)).toEqual(['EventBus', 'PublishEventsPolicy']);
    expect(publishEvents([], '')).toBe('false');
    expect(publishEvents([], 'true')).toBe('true');
    const subscriptions = loadSubscriptions({ root: ROOT, mode: 'aws', env: { SUBSCRIPTIONS_FILE: FILE } });
    expect(publishEvents(subscriptions, 'false')).toBe('false');
  });
});

describe('the deployer policy (infra/deployer-policy.json)', () => {
  it('grants every action CloudFormation needs for this template’s resources', () => {
    expect(missingPermissions(template)).toEqual([]);
  });
});
