import { type MessageAttributeValue, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { type OutboundMessage, type QueueKey, type QueueSender, QueueUnavailableError } from './port.js';

export interface SqsSenderConfig {
  client: SQSClient;
  queueUrls: Readonly<Record<QueueKey, string>>;
}

/** Sends to SQS FIFO queues; any SDK failure (after the client's retries) becomes a QueueUnavailableError. */
export function createSqsSender({ client, queueUrls }: SqsSenderConfig): QueueSender {
  return {
    async send(message, signal) {
      const MessageAttributes: Record<string, MessageAttributeValue> = {};
      for (const name in message.attributes) {
        MessageAttributes[name] = { DataType: 'String', StringValue: message.attributes[name] };
      }
      try {
        await client.send(
          new SendMessageCommand({
            QueueUrl: queueUrls[message.queue],
            MessageBody: message.body,
            MessageGroupId: message.groupId,
            MessageDeduplicationId: message.deduplicationId,
            MessageAttributes,
          }),
          { abortSignal: signal },
        );
      } catch (error) {
        const name = error instanceof Error ? error.name : 'UnknownError';
        throw new QueueUnavailableError(
          `SendMessage to the ${message.queue} queue failed: ${name}`,
          message.queue,
          {
            cause: error,
          },
        );
      }
    },
  };
}

export type { OutboundMessage };
