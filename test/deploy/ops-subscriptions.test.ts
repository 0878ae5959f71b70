import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { EventBridgeClient, PutEventsCommand, UpdateConnectionCommand } from '@aws-sdk/client-eventbridge';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { type DashboardClients, main } from '../../scripts/ops.js';
import { describedStack, opsClients, outputsWith } from '../support/stack-outputs.js';

const DLQ = 'https://sqs.eu-west-1.amazonaws.com/123456789012/crm-webhook-receiver-test-audit-dlq';
const BUS = 'crm-webhook-receiver-test-redrive';
const RULE =
  'arn:aws:events:eu-west-1:123456789012:rule/crm-webhook-receiver-test/crm-webhook-receiver-test-audit';
// The detail as the worker published it: a number JSON.parse would round, a date kept as written.
const DETAIL =
  '{"EventId":"e-1","PrimaryKey":12345678901234567890,"FieldValues":{"updated":"0001-01-01T00:00:00"}}';

/** A dead letter of the audit subscription as EventBridge leaves it in the DLQ. */
function deadLetter(id: string, rule = RULE) {
  return {
    MessageId: id,
    ReceiptHandle: `rh-${id}`,
    Body: `{"version":"0","id":"x-${id}","detail-type":"contact.changed","source":"crm-webhook-receiver","account":"123456789012","time":"2026-01-02T03:04:05Z","region":"eu-west-1","resources":[],"detail":${DETAIL}}`,
    MessageAttributes: {
      RULE_ARN: { DataType: 'String', StringValue: rule },
      ERROR_CODE: { DataType: 'String', StringValue: 'SDK_CLIENT_ERROR' },
    },
  };
}

describe('npm run ops -- redrive-subscription and rotate-subscription-key', () => {
  const cloudFormation = mockClient(CloudFormationClient);
  const sqs = mockClient(SQSClient);
  const eventBridge = mockClient(EventBridgeClient);
  const ssm = mockClient(SSMClient);
  let clients: DashboardClients;

  beforeEach(() => {
    for (const mock of [cloudFormation, sqs, eventBridge, ssm]) mock.reset();
    cloudFormation
      .on(DescribeStacksCommand)
      .resolves(
        describedStack(outputsWith({ AuditSubscriptionDeadLetterQueueUrl: DLQ, RedriveBusName: BUS })),
      );
    clients = opsClients();
  });

  it('redrive-subscription: each dead letter onto the redrive bus for its rule alone, then deleted', async () => {
    sqs
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [deadLetter('m-1'), deadLetter('m-2')] })
      .resolves({ Messages: [] });
    eventBridge
      .on(PutEventsCommand)
      .resolves({ FailedEntryCount: 0, Entries: [{ EventId: 'a' }, { EventId: 'b' }] });

    const result = await main(['redrive-subscription', 'audit', '--stage', 'test'], clients);

    expect(result).toEqual({ subscription: 'audit', redriven: 2, failed: [] });
    expect(sqs.commandCalls(ReceiveMessageCommand)[0]?.args[0].input).toEqual({
      QueueUrl: DLQ,
      MaxNumberOfMessages: 10,
      VisibilityTimeout: 60,
      WaitTimeSeconds: 0,
      MessageAttributeNames: ['All'],
    });
    const [entry] = eventBridge.commandCalls(PutEventsCommand)[0]!.args[0].input.Entries!;
    expect(entry).toEqual({
      EventBusName: BUS,
      Source: 'crm-webhook-receiver',
      DetailType: 'contact.changed',
      Detail: DETAIL,
      Time: new Date('2026-01-02T03:04:05Z'),
      Resources: [RULE],
    });
    expect(sqs.commandCalls(DeleteMessageBatchCommand).map((c) => c.args[0].input)).toEqual([
      {
        QueueUrl: DLQ,
        Entries: [
          { Id: '0', ReceiptHandle: 'rh-m-1' },
          { Id: '1', ReceiptHandle: 'rh-m-2' },
        ],
      },
    ]);
  });

  it('redrive-subscription: what PutEvents refuses, or another rule’s dead letter, stays in the DLQ and is reported', async () => {
    const foreign =
      'arn:aws:events:eu-west-1:123456789012:rule/crm-webhook-receiver-test/crm-webhook-receiver-test-other';
    sqs
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [deadLetter('m-1'), deadLetter('m-2', foreign), deadLetter('m-3')] })
      .resolves({ Messages: [] });
    eventBridge.on(PutEventsCommand).resolves({
      FailedEntryCount: 1,
      Entries: [{ EventId: 'a' }, { ErrorCode: 'InternalFailure', ErrorMessage: 'try again' }],
    });

    const result = await main(['redrive-subscription', 'audit', '--stage', 'test'], clients);

    expect(result).toEqual({
      subscription: 'audit',
      redriven: 1,
      failed: [
        { messageId: 'm-2', reason: `its RULE_ARN (${foreign}) is not this subscription's rule` },
        { messageId: 'm-3', reason: 'PutEvents: InternalFailure try again' },
      ],
    });
    expect(eventBridge.commandCalls(PutEventsCommand)[0]?.args[0].input.Entries).toHaveLength(2);
    expect(sqs.commandCalls(DeleteMessageBatchCommand)[0]?.args[0].input.Entries).toEqual([
      { Id: '0', ReceiptHandle: 'rh-m-1' },
    ]);
  });

  it('redrive-subscription --max stops after that many', async () => {
    sqs.on(ReceiveMessageCommand).resolves({ Messages: [deadLetter('m-1')] });
    eventBridge.on(PutEventsCommand).resolves({ Entries: [{ EventId: 'a' }] });

    const result = await main(['redrive-subscription', 'audit', '--stage', 'test', '--max', '3'], clients);

    expect(result).toMatchObject({ redriven: 3 });
    expect(sqs.commandCalls(ReceiveMessageCommand).map((c) => c.args[0].input.MaxNumberOfMessages)).toEqual([
      3, 2, 1,
    ]);
  });

  it('redrive-subscription refuses a subscription the stage does not have, naming those it has', async () => {
    await expect(main(['redrive-subscription', 'audits', '--stage', 'test'], clients)).rejects.toThrow(
      'stage test has no subscription audits (its stack output AuditsSubscriptionDeadLetterQueueUrl is missing); subscriptions: audit',
    );
    expect(sqs.calls()).toHaveLength(0);
  });

  describe('rotate-subscription-key', () => {
    beforeEach(() => {
      vi.stubEnv('SUBSCRIPTIONS_FILE', 'test/deploy/fanout-subscriptions.yml');
    });

    it('writes the key piped on stdin to the SSM parameter and to the connection, and prints neither', async () => {
      ssm.on(PutParameterCommand).resolves({ Version: 2 });
      eventBridge.on(UpdateConnectionCommand).resolves({ ConnectionState: 'UPDATING' });

      const result = await main(
        ['rotate-subscription-key', 'department-changes', '--stage', 'test'],
        clients,
        async () => 'k3y-new\n',
      );

      expect(result).toEqual({
        subscription: 'department-changes',
        parameter: '/crm/department-key',
        connection: 'crm-webhook-receiver-test-department-changes',
        state: 'UPDATING',
      });
      expect(ssm.commandCalls(PutParameterCommand).map((c) => c.args[0].input)).toEqual([
        { Name: '/crm/department-key', Value: 'k3y-new', Type: 'String', Overwrite: true },
      ]);
      expect(eventBridge.commandCalls(UpdateConnectionCommand).map((c) => c.args[0].input)).toEqual([
        {
          Name: 'crm-webhook-receiver-test-department-changes',
          AuthorizationType: 'API_KEY',
          AuthParameters: { ApiKeyAuthParameters: { ApiKeyName: 'X-Api-Key', ApiKeyValue: 'k3y-new' } },
        },
      ]);
    });

    it.each([
      ['no key on stdin', 'department-changes', '', 'pipe the new API key on standard input'],
      ['a subscription without auth', 'audit', 'k', 'subscription audit has no auth'],
      ['an unknown subscription', 'nope', 'k', 'subscriptions.yml has no subscription nope'],
    ])('refuses %s and writes nothing', async (_, name, key, message) => {
      await expect(
        main(['rotate-subscription-key', name, '--stage', 'test'], clients, async () => key),
      ).rejects.toThrow(message);
      expect(ssm.calls()).toHaveLength(0);
      expect(eventBridge.calls()).toHaveLength(0);
    });
  });
});
