import {
  type CloudWatchClient,
  GetMetricDataCommand,
  type MetricDataQuery,
} from '@aws-sdk/client-cloudwatch';
import {
  DescribeApiDestinationCommand,
  type EventBridgeClient,
  ListRulesCommand,
  ListTargetsByRuleCommand,
  type Rule,
  type Target,
} from '@aws-sdk/client-eventbridge';
import { GetQueueAttributesCommand, GetQueueUrlCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SubscriptionStatus } from '../../dashboard/source.js';

export interface SubscriptionClients {
  eventBridge: EventBridgeClient;
  sqs: SQSClient;
  cloudWatch: CloudWatchClient;
}

/** The rule metrics (namespace `AWS/Events`) the counts come from. */
const METRICS = ['MatchedEvents', 'Invocations', 'FailedInvocations'] as const;
type RuleCounts = Record<(typeof METRICS)[number], number>;

/** The window the counts cover, said on the page. */
export const COUNTS_HOURS = 24;

/**
 * The subscriptions of a deployed stage, read without side effects: the rules on the stage's bus
 * (ListRules) with their pattern and target (ListTargetsByRule; an API destination's URL from
 * DescribeApiDestination), the depth of each rule's DLQ (GetQueueAttributes), and the last
 * {@link COUNTS_HOURS} hours of each rule's `AWS/Events` metrics in one GetMetricData call.
 * `delivered` is Invocations − FailedInvocations; nothing tells what is in flight.
 */
export async function subscriptionStatus(
  clients: SubscriptionClients,
  options: { busName: string; prefix: string; now?: number },
): Promise<SubscriptionStatus[]> {
  const { busName, prefix, now = Date.now() } = options;
  const rules = await listRules(clients.eventBridge, busName);
  const counts = await ruleCounts(clients.cloudWatch, busName, rules, now);
  return Promise.all(
    rules.map(async (rule, index) => {
      const { Targets = [] } = await clients.eventBridge.send(
        new ListTargetsByRuleCommand({ Rule: rule.Name, EventBusName: busName }),
      );
      const target = Targets[0];
      const { MatchedEvents, Invocations, FailedInvocations } = counts[index]!;
      return {
        name: rule.Name!.startsWith(`${prefix}-`) ? rule.Name!.slice(prefix.length + 1) : rule.Name!,
        pattern: JSON.parse(rule.EventPattern ?? '{}') as Record<string, unknown>,
        target: target ? await describeTarget(clients.eventBridge, target) : 'no target',
        matched: MatchedEvents,
        delivered: Math.max(0, Invocations - FailedInvocations),
        inFlight: null,
        failed: FailedInvocations,
        dlqDepth: target?.DeadLetterConfig?.Arn
          ? await queueDepth(clients.sqs, target.DeadLetterConfig.Arn)
          : 0,
      };
    }),
  );
}

async function listRules(eventBridge: EventBridgeClient, busName: string): Promise<Rule[]> {
  const rules: Rule[] = [];
  let NextToken: string | undefined;
  do {
    const page = await eventBridge.send(new ListRulesCommand({ EventBusName: busName, NextToken }));
    rules.push(...(page.Rules ?? []));
    NextToken = page.NextToken;
  } while (NextToken !== undefined);
  return rules;
}

/** Per rule, the sum of each of {@link METRICS} over the window. */
async function ruleCounts(
  cloudWatch: CloudWatchClient,
  busName: string,
  rules: readonly Rule[],
  now: number,
): Promise<RuleCounts[]> {
  const sums = rules.map((): RuleCounts => ({ MatchedEvents: 0, Invocations: 0, FailedInvocations: 0 }));
  if (rules.length === 0) return sums;
  const period = COUNTS_HOURS * 3600;
  const queries: MetricDataQuery[] = rules.flatMap((rule, r) =>
    METRICS.map((MetricName, m) => ({
      Id: `r${r}m${m}`,
      MetricStat: {
        Metric: {
          Namespace: 'AWS/Events',
          MetricName,
          Dimensions: [
            { Name: 'EventBusName', Value: busName },
            { Name: 'RuleName', Value: rule.Name },
          ],
        },
        Period: period,
        Stat: 'Sum',
      },
    })),
  );
  const end = Math.ceil(now / 60_000) * 60_000;
  let NextToken: string | undefined;
  do {
    const page = await cloudWatch.send(
      new GetMetricDataCommand({
        MetricDataQueries: queries,
        StartTime: new Date(end - period * 1000),
        EndTime: new Date(end),
        NextToken,
      }),
    );
    for (const result of page.MetricDataResults ?? []) {
      const [, r, m] = /^r(\d+)m(\d+)$/.exec(result.Id ?? '') ?? [];
      const rule = sums[Number(r)];
      const metric = METRICS[Number(m)];
      if (rule === undefined || metric === undefined) continue;
      rule[metric] += (result.Values ?? []).reduce((total, value) => total + value, 0);
    }
    NextToken = page.NextToken;
  } while (NextToken !== undefined);
  return sums;
}

/** An API destination as its URL, a queue as `queue <name>`, a Lambda by its ARN. */
async function describeTarget(eventBridge: EventBridgeClient, target: Target): Promise<string> {
  const arn = target.Arn ?? '';
  const destination = /:api-destination\/([^/]+)/.exec(arn)?.[1];
  if (destination !== undefined) {
    const { InvocationEndpoint } = await eventBridge.send(
      new DescribeApiDestinationCommand({ Name: destination }),
    );
    return InvocationEndpoint ?? arn;
  }
  if (arn.startsWith('arn:aws:sqs:')) return `queue ${arn.slice(arn.lastIndexOf(':') + 1)}`;
  return arn;
}

/** Messages in a queue given by ARN (visible and in flight), without receiving any. */
async function queueDepth(sqs: SQSClient, arn: string): Promise<number> {
  const [, , , , account, name] = arn.split(':');
  const { QueueUrl } = await sqs.send(
    new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: account }),
  );
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return (
    Number(Attributes.ApproximateNumberOfMessages ?? 0) +
    Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0)
  );
}
