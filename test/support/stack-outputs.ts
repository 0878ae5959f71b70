import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SSMClient } from '@aws-sdk/client-ssm';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DashboardClients } from '../../scripts/ops.js';

const ACCOUNT = '123456789012';
/** A queue URL of the stage `test` in eu-west-1. */
export const url = (name: string) =>
  `https://sqs.eu-west-1.amazonaws.com/${ACCOUNT}/crm-webhook-receiver-test-${name}.fifo`;
/** A queue ARN of the stage `test`. */
export const arn = (name: string) =>
  `arn:aws:sqs:eu-west-1:${ACCOUNT}:crm-webhook-receiver-test-${name}.fifo`;

/** The outputs of the stage `test`'s stack, as DescribeStacks lists them. */
export function outputs(): Array<{ OutputKey: string; OutputValue: string }> {
  const list: Record<string, string> = {
    RowsTableName: 'crm-webhook-receiver-test-rows',
    EventsTableName: 'crm-webhook-receiver-test-events',
    WebhooksTableName: 'crm-webhook-receiver-test-webhooks',
    EventBusName: 'crm-webhook-receiver-test',
    // As serverless.yml writes it with the default parameters (test/deploy/stack.test.ts checks it).
    IngestSettings:
      '{"ENTITIES":"","ALLOW_UNSIGNED":"false","MAX_EVENT_AGE_SECONDS":"","MAX_BODY_BYTES":"","HEADER_PREFIX":""}',
  };
  for (const [key, name] of [
    ['Contact', 'contact'],
    ['Activity', 'activity'],
    ['WebhookState', 'webhook-state'],
    ['Entities', 'entities'],
    ['Parked', 'parked'],
    ['Reconcile', 'reconcile'],
  ] as const) {
    list[`${key}QueueUrl`] = url(name);
    list[`${key}DeadLetterQueueUrl`] = url(`${name}-dlq`);
    list[`${key}DeadLetterQueueArn`] = arn(`${name}-dlq`);
  }
  return Object.entries(list).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue }));
}

/** {@link outputs} with `changes` (by OutputKey): a value replaced, or an output added. */
export function outputsWith(
  changes: Record<string, string>,
): Array<{ OutputKey: string; OutputValue: string }> {
  const list = outputs().filter((output) => !Object.hasOwn(changes, output.OutputKey));
  return [
    ...list,
    ...Object.entries(changes).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })),
  ];
}

/** DescribeStacks' answer for the stage `test`: its stack, up to date, with `list` as its outputs. */
export function describedStack(list = outputs()) {
  return {
    Stacks: [
      { StackName: 'x', StackStatus: 'UPDATE_COMPLETE' as const, CreationTime: new Date(), Outputs: list },
    ],
  };
}

/** The clients `npm run ops` is given, each in eu-west-1 (the test mocks them), `given` in their place. */
export function opsClients(given: Partial<DashboardClients> = {}): DashboardClients {
  return {
    cloudFormation: new CloudFormationClient({ region: 'eu-west-1' }),
    sqs: new SQSClient({ region: 'eu-west-1' }),
    dynamo: DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' })),
    cloudWatch: new CloudWatchClient({ region: 'eu-west-1' }),
    eventBridge: new EventBridgeClient({ region: 'eu-west-1' }),
    ssm: new SSMClient({ region: 'eu-west-1' }),
    ...given,
  };
}

/** One parked delivery as ReceiveMessage returns it (`ops parked` asks for these attributes). */
export function parkedMessage(receiveCount = 1) {
  return {
    MessageId: 'm-1',
    Body: '{"Event":"sale.created"}',
    Attributes: { MessageGroupId: 'Cust1:sale:7', ApproximateReceiveCount: String(receiveCount) },
    MessageAttributes: { reason: { DataType: 'String', StringValue: 'unknown-event' } },
  };
}
