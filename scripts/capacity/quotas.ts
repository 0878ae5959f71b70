/**
 * AWS's default quotas that bound one stage of the receiver, per region: the data `npm run capacity`
 * computes ceilings from (scripts/capacity/model.ts). Each entry names the page its figures were read
 * on and when; a figure that differs by region is written per region, not once. Defaults only: a quota
 * the account already had raised is not here (Service Quotas shows what applies to an account).
 */

/** The regions the model knows; a region's figures are added here, each quota with a value for it. */
export const REGIONS = ['us-east-1', 'eu-central-1', 'eu-west-1'] as const;
export type Region = (typeof REGIONS)[number];

export interface Quota {
  /** What AWS calls it, and its scope. */
  name: string;
  unit: string;
  values: Record<Region, number>;
  /** Whether Service Quotas (or AWS Support) can raise it. */
  adjustable: boolean;
  /** The AWS documentation page the figures were read on. */
  source: string;
  /** When they were read (YYYY-MM-DD). */
  read: string;
}

const READ = '2026-11-28';
const everywhere = (value: number): Record<Region, number> => ({
  'us-east-1': value,
  'eu-central-1': value,
  'eu-west-1': value,
});

export const QUOTAS = {
  apiGatewayRps: {
    name: 'API Gateway throttle quota per account and region, across HTTP, REST and WebSocket APIs',
    unit: 'requests/s',
    values: everywhere(10_000),
    adjustable: true,
    source: 'https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html',
    read: READ,
  },
  apiGatewayBurst: {
    name: 'API Gateway burst (token bucket) per account and region, set by AWS from the RPS quota',
    unit: 'requests',
    values: everywhere(5_000),
    adjustable: false,
    source: 'https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html',
    read: READ,
  },
  lambdaConcurrency: {
    name: 'Lambda concurrent executions per account and region (new accounts start lower)',
    unit: 'executions',
    values: everywhere(1_000),
    adjustable: true,
    source: 'https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html',
    read: READ,
  },
  lambdaUnreservedMinimum: {
    name: 'Lambda unreserved concurrency kept for functions without a reservation',
    unit: 'executions',
    values: everywhere(100),
    adjustable: false,
    source: 'https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html',
    read: READ,
  },
  lambdaScalingRate: {
    name: 'Lambda concurrency scaling rate, per function (refilled continuously)',
    unit: 'execution environments per 10 s',
    values: everywhere(1_000),
    adjustable: false,
    source: 'https://docs.aws.amazon.com/lambda/latest/dg/scaling-behavior.html',
    read: READ,
  },
  sqsFifoHighThroughputTps: {
    name: 'SQS FIFO high throughput mode, per queue and per API action, without batching',
    unit: 'transactions/s',
    values: { 'us-east-1': 70_000, 'eu-central-1': 19_000, 'eu-west-1': 70_000 },
    adjustable: false,
    source: 'https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html',
    read: READ,
  },
  sqsFifoPartitionTps: {
    name: 'SQS FIFO per partition and per API action (a message group lives in one partition); the whole queue without high throughput mode',
    unit: 'transactions/s',
    values: everywhere(300),
    adjustable: false,
    source: 'https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html',
    read: READ,
  },
  sqsFifoInFlight: {
    name: 'SQS FIFO in-flight messages per queue (received, not yet deleted); also the backlog scanned for available groups',
    unit: 'messages',
    values: everywhere(120_000),
    adjustable: true,
    source: 'https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-fifo.html',
    read: READ,
  },
  eventBridgePutEventsTps: {
    name: 'EventBridge PutEvents throttle limit per account and region (up to 10 entries a call)',
    unit: 'requests/s',
    values: { 'us-east-1': 10_000, 'eu-central-1': 2_400, 'eu-west-1': 10_000 },
    adjustable: true,
    source: 'https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-quota.html',
    read: READ,
  },
  eventBridgeInvocationsTps: {
    name: 'EventBridge invocations (an event matching a rule, sent to a target) per account and region; delayed, not dropped, past it',
    unit: 'invocations/s',
    values: { 'us-east-1': 18_750, 'eu-central-1': 4_500, 'eu-west-1': 18_750 },
    adjustable: true,
    source: 'https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-quota.html',
    read: READ,
  },
  dynamoTableWru: {
    name: 'DynamoDB on-demand table throughput, per table (write request units)',
    unit: 'WRU/s',
    values: everywhere(40_000),
    adjustable: true,
    source: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html',
    read: READ,
  },
  dynamoNewTableWru: {
    name: 'DynamoDB new on-demand table: writes served at once before it adapts (doubling its previous peak within 30 minutes)',
    unit: 'WRU/s',
    values: everywhere(4_000),
    adjustable: false,
    source: 'https://repost.aws/knowledge-center/on-demand-table-throttling-dynamodb',
    read: READ,
  },
  dynamoPartitionWru: {
    name: 'DynamoDB per partition (one partition key value is in one partition)',
    unit: 'WRU/s',
    values: everywhere(1_000),
    adjustable: false,
    source: 'https://repost.aws/knowledge-center/on-demand-table-throttling-dynamodb',
    read: READ,
  },
  ssmGetParameterTps: {
    name: 'SSM Parameter Store GetParameter(s) per account and region, standard throughput',
    unit: 'transactions/s',
    values: everywhere(40),
    adjustable: false,
    source: 'https://docs.aws.amazon.com/general/latest/gr/ssm.html',
    read: READ,
  },
} satisfies Record<string, Quota>;

export type QuotaKey = keyof typeof QUOTAS;

/** A quota's value in `region`. */
export function quota(key: QuotaKey, region: Region): number {
  return QUOTAS[key].values[region];
}
