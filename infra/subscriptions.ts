/**
 * The CloudFormation of the event bus and of subscriptions.yml, merged into serverless.yml's
 * `resources` through infra/subscriptions.cjs. Per stage: one custom bus, and `events:PutEvents` on
 * it for the four workers. Per subscription: a rule with one target (API destination, SQS queue or
 * Lambda), EventBridge's retry policy, an SQS dead-letter queue, and alarms on the DLQ and on the rule's
 * FailedInvocations and InvocationsFailedToBeSentToDlq.
 */
import { logicalName, type Subscription } from '../lib/bus/subscriptions.js';
import { alarm, type Template } from './alarm.js';

export interface StackNames {
  service: string;
  stage: string;
}

/**
 * The roles of infra/iam.yml that may put events on the stage's bus, and nothing else on it: the
 * workers, and the reconcile function (its lifecycle events, lib/reconcile/records/lifecycle.ts).
 */
export const PUBLISHING_ROLES = [
  'ContactWorkerRole',
  'ActivityWorkerRole',
  'EntitiesWorkerRole',
  'WebhookStateWorkerRole',
  'ReconcileRole',
  'ReconcilePollRole',
];

const ref = (logicalId: string) => ({ Ref: logicalId });
const arn = (logicalId: string) => ({ 'Fn::GetAtt': [logicalId, 'Arn'] });

/** `Resources` and `Outputs` for the bus and every subscription. */
export function subscriptionResources(
  subscriptions: readonly Subscription[],
  names: StackNames,
): { Resources: Template; Outputs: Template } {
  const prefix = `${names.service}-${names.stage}`;
  const Resources: Template = {
    EventBus: { Type: 'AWS::Events::EventBus', Properties: { Name: prefix } },
    PublishEventsPolicy: {
      Type: 'AWS::IAM::Policy',
      Properties: {
        PolicyName: 'publish-events',
        Roles: PUBLISHING_ROLES.map(ref),
        PolicyDocument: {
          Version: '2012-10-17',
          Statement: [{ Effect: 'Allow', Action: 'events:PutEvents', Resource: arn('EventBus') }],
        },
      },
    },
  };
  const Outputs: Template = {
    EventBusName: { Value: ref('EventBus') },
    EventBusArn: { Value: arn('EventBus') },
  };
  if (subscriptions.length > 0) {
    // `npm run ops -- redrive-subscription` puts a subscription's dead letters here, for its rule alone.
    Resources.RedriveBus = { Type: 'AWS::Events::EventBus', Properties: { Name: `${prefix}-redrive` } };
    Outputs.RedriveBusName = { Value: ref('RedriveBus') };
  }
  for (const subscription of subscriptions) {
    Object.assign(Resources, subscriptionStack(subscription, prefix));
    const id = `${logicalName(subscription.name)}Subscription`;
    Outputs[`${id}DeadLetterQueueUrl`] = { Value: ref(`${id}DeadLetterQueue`) };
    if (subscription.target.kind === 'queue') Outputs[`${id}QueueUrl`] = { Value: ref(`${id}Queue`) };
  }
  return { Resources, Outputs };
}

/**
 * PUBLISH_EVENTS for the workers: the `publishEvents` stage param when it is `true` or `false`,
 * otherwise whether there is any subscription (publishing costs $1.00 per million entries).
 */
export function publishEvents(
  subscriptions: readonly Subscription[],
  param: string | undefined,
): 'true' | 'false' {
  if (param === 'true' || param === 'false') return param;
  return subscriptions.length > 0 ? 'true' : 'false';
}

function subscriptionStack(subscription: Subscription, prefix: string): Template {
  const id = `${logicalName(subscription.name)}Subscription`;
  const name = `${prefix}-${subscription.name}`;
  const { target, retry } = subscription;
  const queues = [`${id}DeadLetterQueue`, ...(target.kind === 'queue' ? [`${id}Queue`] : [])];
  const rules = [`${id}Rule`, `${id}RedriveRule`];
  const targets = [
    {
      Id: subscription.name,
      ...ruleTarget(id, subscription),
      RetryPolicy: { MaximumRetryAttempts: retry.attempts, MaximumEventAgeInSeconds: retry.maxAgeSeconds },
      DeadLetterConfig: { Arn: arn(`${id}DeadLetterQueue`) },
    },
  ];
  const resources: Template = {
    [`${id}Rule`]: {
      Type: 'AWS::Events::Rule',
      Properties: {
        Name: name,
        Description: `subscription ${subscription.name} (subscriptions.yml)`,
        EventBusName: ref('EventBus'),
        EventPattern: subscription.pattern,
        State: 'ENABLED',
        Targets: targets,
      },
    },
    // The same target on the redrive bus, for the events `ops redrive-subscription` puts there from the DLQ:
    // they carry the first rule's ARN in `resources`, so each reaches the subscription it failed for, and no other.
    [`${id}RedriveRule`]: {
      Type: 'AWS::Events::Rule',
      Properties: {
        Name: name,
        Description: `redrive of subscription ${subscription.name} (npm run ops -- redrive-subscription)`,
        EventBusName: ref('RedriveBus'),
        EventPattern: { resources: [arn(`${id}Rule`)] },
        State: 'ENABLED',
        Targets: targets,
      },
    },
    // Retained, as every queue of the stack: removing a subscription, or the stack, keeps what waits in them.
    [`${id}DeadLetterQueue`]: queue(`${name}-dlq`),
    // EventBridge sends to the DLQ (and to a queue target) under its own principal, for this rule only.
    [`${id}QueuePolicy`]: {
      Type: 'AWS::SQS::QueuePolicy',
      Properties: {
        Queues: queues.map(ref),
        PolicyDocument: {
          Version: '2012-10-17',
          Statement: [
            {
              Effect: 'Allow',
              Principal: { Service: 'events.amazonaws.com' },
              Action: 'sqs:SendMessage',
              Resource: queues.map(arn),
              Condition: { ArnEquals: { 'aws:SourceArn': rules.map(arn) } },
            },
          ],
        },
      },
    },
    [`${id}DeadLetterQueueAlarm`]: alarm({
      AlarmName: `${name}-dlq-not-empty`,
      AlarmDescription: `Events for subscription ${subscription.name} exhausted their retries and wait in its DLQ (npm run ops -- redrive-subscription ${subscription.name}).`,
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [`${id}DeadLetterQueue`, 'QueueName'] } }],
      Statistic: 'Maximum',
      Period: 60,
    }),
    // The rule's own metrics: deliveries that failed for good (they go to the DLQ), and events that could
    // not even be put in the DLQ, which are lost.
    [`${id}FailedInvocationsAlarm`]: alarm({
      AlarmName: `${name}-failed-invocations`,
      AlarmDescription: `Subscription ${subscription.name}: deliveries failed for good (after the retry policy) and went to its DLQ.`,
      ...ruleMetric(name, 'FailedInvocations'),
    }),
    [`${id}DeadLetterFailuresAlarm`]: alarm({
      AlarmName: `${name}-dlq-send-failed`,
      AlarmDescription: `Subscription ${subscription.name}: failed deliveries could not be sent to its DLQ and are lost (check the DLQ's policy and that it exists).`,
      ...ruleMetric(name, 'InvocationsFailedToBeSentToDlq'),
    }),
  };
  if (target.kind === 'url') Object.assign(resources, apiDestination(id, name, subscription, target.url));
  if (target.kind === 'queue') resources[`${id}Queue`] = queue(`${prefix}-${target.queue}`);
  if (target.kind === 'lambda') {
    for (const rule of rules) {
      resources[rule.replace(/Rule$/, 'Permission')] = {
        Type: 'AWS::Lambda::Permission',
        Properties: {
          Action: 'lambda:InvokeFunction',
          FunctionName: target.lambda,
          Principal: 'events.amazonaws.com',
          SourceArn: arn(rule),
        },
      };
    }
  }
  return resources;
}

function ruleTarget(id: string, { target }: Subscription): Template {
  switch (target.kind) {
    case 'url':
      return { Arn: arn(`${id}ApiDestination`), RoleArn: arn(`${id}Role`) };
    case 'queue':
      return { Arn: arn(`${id}Queue`) };
    case 'lambda':
      return { Arn: target.lambda };
  }
}

/**
 * Connection, API destination and the role the rule invokes it with. A connection needs an auth
 * parameter: API_KEY with the subscription's header and the SSM value, or, without `auth`, the
 * header `X-Crm-Subscription` carrying the subscription's name (harmless and useful to the consumer).
 */
function apiDestination(id: string, name: string, subscription: Subscription, url: string): Template {
  const { auth } = subscription;
  const apiKey = auth
    ? { ApiKeyName: auth.header, ApiKeyValue: `{{resolve:ssm:${auth.parameter}}}` }
    : { ApiKeyName: 'X-Crm-Subscription', ApiKeyValue: subscription.name };
  return {
    [`${id}Connection`]: {
      Type: 'AWS::Events::Connection',
      Properties: {
        Name: name,
        AuthorizationType: 'API_KEY',
        AuthParameters: { ApiKeyAuthParameters: apiKey },
      },
    },
    [`${id}ApiDestination`]: {
      Type: 'AWS::Events::ApiDestination',
      Properties: {
        Name: name,
        ConnectionArn: arn(`${id}Connection`),
        InvocationEndpoint: url,
        HttpMethod: 'POST',
      },
    },
    [`${id}Role`]: {
      Type: 'AWS::IAM::Role',
      Properties: {
        AssumeRolePolicyDocument: {
          Version: '2012-10-17',
          Statement: [
            { Effect: 'Allow', Principal: { Service: 'events.amazonaws.com' }, Action: 'sts:AssumeRole' },
          ],
        },
        Policies: [
          {
            PolicyName: 'invoke-api-destination',
            PolicyDocument: {
              Version: '2012-10-17',
              Statement: [
                {
                  Effect: 'Allow',
                  Action: 'events:InvokeApiDestination',
                  Resource: arn(`${id}ApiDestination`),
                },
              ],
            },
          },
        ],
      },
    },
  };
}

/** A metric of the rule named `ruleName` on the stage's bus (AWS/Events), summed over 5 minutes. */
function ruleMetric(ruleName: string, MetricName: string): Template {
  return {
    Namespace: 'AWS/Events',
    MetricName,
    Dimensions: [
      { Name: 'EventBusName', Value: ref('EventBus') },
      { Name: 'RuleName', Value: ruleName },
    ],
    Statistic: 'Sum',
    Period: 300,
  };
}

function queue(queueName: string): Template {
  return {
    Type: 'AWS::SQS::Queue',
    DeletionPolicy: 'Retain',
    UpdateReplacePolicy: 'Retain',
    Properties: { QueueName: queueName, MessageRetentionPeriod: 1_209_600, SqsManagedSseEnabled: true },
  };
}
