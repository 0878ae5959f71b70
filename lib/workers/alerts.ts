import { PublishCommand, type SNSClient } from '@aws-sdk/client-sns';
import type { Webhook } from '../model/types.js';

/** Where alerts about webhooks go. */
export interface AlertPublisher {
  webhookTooManyErrors(webhook: Webhook): Promise<void>;
}

/** Where the watch of the CRM's webhooks alerts: a webhook it could not set Active again. */
export interface ReactivationAlerts {
  webhookNotReactivated(failure: ReactivationFailure): Promise<void>;
}

export interface ReactivationFailure {
  context: string;
  webhookId: number;
  webhookName: string;
  state: string;
  attempts: number;
  /** The CRM's one-line reason (no credentials). */
  error: string;
}

export interface SnsAlertConfig {
  client: SNSClient;
  topicArn: string;
}

/** Publishes alerts to an SNS topic (e-mail, chat, paging: whatever subscribes to it). */
export function createSnsAlertPublisher({
  client,
  topicArn,
}: SnsAlertConfig): AlertPublisher & ReactivationAlerts {
  const attributes = (context: string, webhookId: number) => ({
    context: { DataType: 'String', StringValue: context },
    webhookId: { DataType: 'Number', StringValue: String(webhookId) },
  });
  return {
    async webhookNotReactivated(failure) {
      const { context, webhookId, webhookName, attempts } = failure;
      await client.send(
        new PublishCommand({
          TopicArn: topicArn,
          Subject: `Webhook ${webhookId} (${context}) could not be set Active again`.slice(0, 100),
          Message: [
            `Webhook "${webhookName}" (id ${webhookId}) of context ${context} is ${failure.state}; setting it Active failed ${attempts} times in a row, the last: ${failure.error}`,
            'The receiver keeps trying with backoff. The CRM sets a webhook Active only when its test delivery is answered 200: check that the receiver answers, or set it Active in the CRM.',
            '',
            JSON.stringify(failure),
          ].join('\n'),
          MessageAttributes: attributes(context, webhookId),
        }),
      );
    },
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
          MessageAttributes: attributes(webhook.context, webhook.webhookId),
        }),
      );
    },
  };
}
