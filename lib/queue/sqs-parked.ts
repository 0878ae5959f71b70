import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { ParkedSource, ReceivedParked } from './port.js';
import { decodeSqsMessage } from './sqs-message.js';

export interface SqsParkedSourceConfig {
  client: SQSClient;
  queueUrl: string;
  /** How long a received message stays hidden, in seconds: a replay run lasts at most half. Default 300 s. */
  visibilityTimeout?: number;
}

/**
 * The parked queue on SQS for the replay: receives with every attribute, the group and the
 * deduplication id, gives back the exact bytes (base64 bodies decoded), deletes, and makes a message
 * visible again.
 */
export function createSqsParkedSource({
  client,
  queueUrl,
  visibilityTimeout = 300,
}: SqsParkedSourceConfig): ParkedSource {
  const handles = new Map<string, string>();
  const handle = (message: ReceivedParked) => handles.get(message.messageId) ?? '';
  return {
    hiddenForMs: visibilityTimeout * 1000,
    async receive(max) {
      const { Messages = [] } = await client.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: Math.min(10, max),
          VisibilityTimeout: visibilityTimeout,
          WaitTimeSeconds: 0,
          MessageAttributeNames: ['All'],
          MessageSystemAttributeNames: ['MessageGroupId', 'MessageDeduplicationId'],
          // The same under its older name, which the local emulator reads.
          AttributeNames: ['All'],
        }),
      );
      return Messages.map((message): ReceivedParked => {
        const { body, attributes } = decodeSqsMessage(message.Body ?? '', message.MessageAttributes);
        const messageId = message.MessageId ?? '';
        const deduplicationId = message.Attributes?.MessageDeduplicationId;
        // Without it a replay cannot tell its own copies from the rest, and would decide them again.
        if (deduplicationId === undefined)
          throw new Error(
            `${queueUrl} answered without MessageDeduplicationId: the parked queue must be FIFO`,
          );
        handles.set(messageId, message.ReceiptHandle ?? '');
        return {
          messageId,
          body,
          attributes,
          groupId: message.Attributes?.MessageGroupId ?? 'parked',
          deduplicationId,
        };
      });
    },
    async remove(message) {
      await client.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: handle(message) }));
    },
    async release(message) {
      await client.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: queueUrl,
          ReceiptHandle: handle(message),
          VisibilityTimeout: 0,
        }),
      );
    },
  };
}
