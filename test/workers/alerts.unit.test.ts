import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { applyStateEvent } from '../../lib/webhook-state.js';
import { createSnsAlertPublisher } from '../../lib/workers/index.js';
import { stateEvent } from '../support/workers.js';

describe('SNS alert', () => {
  it('publishes one message naming the context and webhook', async () => {
    const sns = mockClient(SNSClient);
    sns.on(PublishCommand).resolves({ MessageId: '1' });
    const webhook = applyStateEvent(
      undefined,
      stateEvent('webhook.errors', { context: 'Cust1', primaryKey: 9 }),
    );

    await createSnsAlertPublisher({
      client: new SNSClient({ region: 'us-east-1' }),
      topicArn: 'arn:topic',
    }).webhookTooManyErrors(webhook);

    const calls = sns.commandCalls(PublishCommand);
    expect(calls).toHaveLength(1);
    const input = calls[0]!.args[0].input;
    expect(input).toMatchObject({
      TopicArn: 'arn:topic',
      Subject: 'Webhook 9 (Cust1) is in TooManyErrors',
      MessageAttributes: { context: { DataType: 'String', StringValue: 'Cust1' } },
    });
    expect(input.Message).toContain('"webhookId":9');
    sns.restore();
  });
});
