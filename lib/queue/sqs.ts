import { type MessageAttributeValue, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { type OutboundMessage, type QueueKey, type QueueSender, QueueUnavailableError } from './port.js';
import { encodeSqsMessage } from './sqs-message.js';

export interface SqsSenderConfig {
  client: SQSClient;
  queueUrls: Readonly<Record<QueueKey, string>>;
}

/**
 * Sends to SQS FIFO queues. Encoding errors ({@link encodeSqsMessage}: too large) are thrown as they
 * are; any SDK failure (after the client's retries) becomes a QueueUnavailableError.
 */
export function createSqsSender({ client, queueUrls }: SqsSenderConfig): QueueSender {
  return {
    async send(message) {
      const encoded = encodeSqsMessage(message);
      const MessageAttributes: Record<string, MessageAttributeValue> = {};
      for (const name in encoded.attributes) {
        MessageAttributes[name] = { DataType: 'String', StringValue: encoded.attributes[name] };
      }
      try {
        await client.send(
          new SendMessageCommand({
            QueueUrl: queueUrls[message.queue],
            MessageBody: encoded.body,
            MessageGroupId: encoded.groupId,
            MessageDeduplicationId: encoded.deduplicationId,
            MessageAttributes,
          }),
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
