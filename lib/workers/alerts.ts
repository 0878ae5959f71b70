import { PublishCommand, type SNSClient } from '@aws-sdk/client-sns';
import type { Webhook } from '../model/types.js';

/** Where alerts about webhooks go. */
export interface AlertPublisher {
  webhookTooManyErrors(webhook: Webhook): Promise<void>;
}

export interface SnsAlertConfig {
  client: SNSClient;
  topicArn: string;
}

/** Publishes alerts to an SNS topic (e-mail, chat, paging: whatever subscribes to it). */
export function createSnsAlertPublisher({ client, topicArn }: SnsAlertConfig): AlertPublisher {
  return {
    async webhookTooManyErrors(webhook) {
      const subject = `Webhook ${webhook.webhookId} (${webhook.context}) is in TooManyErrors`;
      const message = [
        `Webhook "${webhook.webhookName}" (id ${webhook.webhookId}) of context ${webhook.context} was disabled by the sender at ${webhook.stateChangedAt}: state TooManyErrors.`,
        'No events are delivered until someone sets it back to Active in the CRM.',
        'Changes made in the meantime must be re-fetched: see the open gap for this webhook.',
        '',
        JSON.stringify({
          context: webhook.context,
          webhookId: webhook.webhookId,
          webhookName: webhook.webhookName,
          state: webhook.state,
          stateChangedAt: webhook.stateChangedAt,
          lastEventId: webhook.lastEventId,
        }),
      ].join('\n');
      await client.send(
        new PublishCommand({
          TopicArn: topicArn,
          Subject: subject.slice(0, 100),
          Message: message,
          MessageAttributes: {
            context: { DataType: 'String', StringValue: webhook.context },
            webhookId: { DataType: 'Number', StringValue: String(webhook.webhookId) },
          },
        }),
      );
    },
  };
}
