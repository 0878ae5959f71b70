import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { apply } from '../../lib/projection.js';
import { replayLockKey } from '../../lib/store/index.js';
import { toRowItem } from '../../lib/store/row-item.js';
import { OpsError } from '../../scripts/ops/commands.js';
import { type DashboardClients, main } from '../../scripts/ops.js';
import { arn, describedStack, opsClients, parkedMessage, url } from '../support/stack-outputs.js';
import { rowEvent } from '../support/workers.js';

describe('npm run ops', () => {
  const cloudFormation = mockClient(CloudFormationClient);
  const sqs = mockClient(SQSClient);
  const dynamo = mockClient(DynamoDBDocumentClient);
  let clients: DashboardClients;

  beforeEach(() => {
    cloudFormation.reset();
    sqs.reset();
    dynamo.reset();
    cloudFormation.on(DescribeStacksCommand).resolves(describedStack());
    clients = opsClients();
  });

  it('reads names from the outputs of the stage’s stack', async () => {
    sqs.on(GetQueueAttributesCommand).resolves({ Attributes: {} });
    await main(['status', '--stage', 'test'], clients);
    expect(cloudFormation.commandCalls(DescribeStacksCommand)[0]?.args[0].input).toEqual({
      StackName: 'crm-webhook-receiver-test',
    });
  });

  it('status: visible, in flight and dead-lettered per queue', async () => {
    sqs.on(GetQueueAttributesCommand).resolves({
      Attributes: { ApproximateNumberOfMessages: '3', ApproximateNumberOfMessagesNotVisible: '1' },
    });
    sqs.on(GetQueueAttributesCommand, { QueueUrl: url('contact-dlq') }).resolves({
      Attributes: { ApproximateNumberOfMessages: '2', ApproximateNumberOfMessagesNotVisible: '0' },
    });

    const result = await main(['status', '--stage', 'test'], clients);

    expect(result).toEqual([
      { queue: 'contact', visible: 3, inFlight: 1, deadLetter: 2 },
      { queue: 'activity', visible: 3, inFlight: 1, deadLetter: 4 },
      { queue: 'webhookState', visible: 3, inFlight: 1, deadLetter: 4 },
      { queue: 'entities', visible: 3, inFlight: 1, deadLetter: 4 },
      { queue: 'parked', visible: 3, inFlight: 1, deadLetter: 4 },
      { queue: 'reconcile', visible: 3, inFlight: 1, deadLetter: 4 },
    ]);
    const calls = sqs.commandCalls(GetQueueAttributesCommand).map((c) => c.args[0].input);
    expect(calls).toHaveLength(12);
    expect(calls[0]).toEqual({
      QueueUrl: url('contact'),
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    });
  });

  it('redrive: one StartMessageMoveTask from the queue’s DLQ back to its source', async () => {
    sqs.on(StartMessageMoveTaskCommand).resolves({ TaskHandle: 'handle-1' });

    const result = await main(['redrive', 'webhook-state', '--stage', 'test', '--rate', '5'], clients);

    expect(result).toEqual({ queue: 'webhookState', taskHandle: 'handle-1' });
    expect(sqs.commandCalls(StartMessageMoveTaskCommand).map((c) => c.args[0].input)).toEqual([
      { SourceArn: arn('webhook-state-dlq'), MaxNumberOfMessagesPerSecond: 5 },
    ]);
  });

  it('redrive refuses a queue that does not exist', async () => {
    await expect(main(['redrive', 'contacts', '--stage', 'test'], clients)).rejects.toThrow(/unknown queue/);
    expect(sqs.commandCalls(StartMessageMoveTaskCommand)).toHaveLength(0);
  });

  it('parked: receives with a short visibility timeout and shows each delivery’s reason', async () => {
    sqs
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [parkedMessage()] })
      .resolves({ Messages: [] });

    const result = await main(['parked', '--stage', 'test', '--max', '5'], clients);

    expect(result).toEqual([
      {
        messageId: 'm-1',
        groupId: 'Cust1:sale:7',
        receiveCount: 1,
        attributes: { reason: 'unknown-event' },
        body: '{"Event":"sale.created"}',
      },
    ]);
    expect(sqs.commandCalls(ReceiveMessageCommand)[0]?.args[0].input).toEqual({
      QueueUrl: url('parked'),
      MaxNumberOfMessages: 5,
      VisibilityTimeout: 30,
      WaitTimeSeconds: 0,
      MessageSystemAttributeNames: ['MessageGroupId', 'ApproximateReceiveCount'],
      MessageAttributeNames: ['All'],
    });
  });

  it('replay-parked: a pattern the wildcard matcher refuses, or another replay running, is one line and receives nothing', async () => {
    await expect(main(['replay-parked', '--stage', 'test', '--event', 'person.**'], clients)).rejects.toThrow(
      new OpsError(
        '--event person.**: invalid event pattern at event: consecutive * are not allowed in a wildcard',
      ),
    );
    dynamo
      .on(PutCommand)
      .rejects(
        new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} }),
      );
    dynamo.on(GetCommand).resolves({
      Item: {
        ...replayLockKey,
        since: '2025-05-14T12:00:00.000Z',
        expiresAt: Date.parse('2025-05-14T12:01:00Z'),
      },
    });

    await expect(main(['replay-parked', '--stage', 'test'], clients)).rejects.toThrow(
      new OpsError(
        'another replay of the parked queue is running (since 2025-05-14T12:00:00.000Z); try again when it ends, ' +
          'or after 2025-05-14T12:01:00.000Z if it stopped without finishing',
      ),
    );
    expect(dynamo.commandCalls(PutCommand)[0]!.args[0].input).toMatchObject({
      TableName: 'crm-webhook-receiver-test-webhooks',
      Item: replayLockKey,
      ConditionExpression: 'attribute_not_exists(sk) OR expiresAt < :now OR expiresAt > :latest',
    });
    expect(sqs.commandCalls(ReceiveMessageCommand)).toHaveLength(0);
  });

  it('rows: one consistent GetItem by row key, and the history with --events', async () => {
    const stored = apply(undefined, rowEvent('contact.created', { context: 'Cust1', primaryKey: 42 }));
    dynamo.on(GetCommand).resolves({ Item: toRowItem(stored, 3) });
    dynamo.on(QueryCommand).resolves({ Items: [] });

    const result = await main(['rows', 'Cust1', 'contact', '42', '--stage', 'test', '--events'], clients);

    expect(result).toMatchObject({ row: { status: 'active' }, events: [] });
    expect(dynamo.commandCalls(GetCommand)[0]?.args[0].input).toEqual({
      TableName: 'crm-webhook-receiver-test-rows',
      Key: { rowKey: 'contact#42#Cust1' },
      ConsistentRead: true,
    });
    expect(dynamo.commandCalls(QueryCommand)[0]?.args[0].input).toMatchObject({
      TableName: 'crm-webhook-receiver-test-events',
      ExpressionAttributeValues: { ':k': 'contact#42#Cust1' },
    });
  });

  it('gaps: the webhooks of one context from the webhooks table, and their recovery items', async () => {
    dynamo.on(QueryCommand).resolves({ Items: [] });

    expect(await main(['gaps', '--stage', 'test', '--context', 'Cust1'], clients)).toEqual([]);
    expect(dynamo.commandCalls(QueryCommand).map((call) => call.args[0].input)).toEqual([
      expect.objectContaining({
        TableName: 'crm-webhook-receiver-test-webhooks',
        ExpressionAttributeValues: { ':c': 'Cust1', ':p': 'webhook#' },
      }),
      expect.objectContaining({
        TableName: 'crm-webhook-receiver-test-webhooks',
        ExpressionAttributeValues: { ':c': 'Cust1', ':p': 'recovery#' },
      }),
    ]);
  });

  it('without --stage, says how to use it and calls nothing', async () => {
    await expect(main(['status'], clients)).rejects.toThrow(/usage: npm run ops/);
    expect(cloudFormation.calls()).toHaveLength(0);
  });
});
