import {
  type MessageAttributeValue,
  SendMessageCommand,
  type SQSClient,
  type SQSClientConfig,
} from '@aws-sdk/client-sqs';
import { type OutboundMessage, type QueueKey, type QueueSender, QueueUnavailableError } from './port.js';
import { encodeSqsMessage, type SqsMessage } from './sqs-message.js';

export interface SqsSenderConfig {
  client: SQSClient;
  queueUrls: Readonly<Record<QueueKey, string>>;
  /** When set, `send` fails after this many milliseconds whatever the client is still waiting for. */
  deadlineMs?: number | undefined;
}

/**
 * SQSClient settings that give up on a silent queue within `budgetMs`: two attempts of at most 40 %
 * each, from the request to the answer's headers (`requestTimeout` only warns unless
 * `throwOnRequestTimeout`), and as long again of silence while the answer's body arrives. With the
 * SDK's backoff between them they end before the budget; a slow throttled answer followed by a
 * silent retry may not, which the sender's `deadlineMs` covers.
 *
 * @example new SQSClient(boundedSqsClientConfig(2500)) // attempts of 1 s, connection in 0.3 s
 */
export function boundedSqsClientConfig(budgetMs: number): SQSClientConfig {
  const attemptMs = Math.floor(budgetMs * 0.4);
  return {
    maxAttempts: 2,
    // Builds each command's middleware stack once (about a quarter of a SendMessage's CPU).
    cacheMiddleware: true,
    requestHandler: {
      connectionTimeout: Math.floor(budgetMs * 0.12),
      requestTimeout: attemptMs,
      throwOnRequestTimeout: true,
      socketTimeout: attemptMs,
    },
  };
}

/** An encoded message's attributes as SendMessage(Batch) takes them: every one a String. */
export function sqsAttributes(encoded: SqsMessage): Record<string, MessageAttributeValue> {
  const attributes: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(encoded.attributes))
    attributes[name] = { DataType: 'String', StringValue: value };
  return attributes;
}

/**
 * Sends to SQS FIFO queues. Encoding errors ({@link encodeSqsMessage}: too large) are thrown as they
 * are; any SDK failure (after the client's retries), or no answer within `deadlineMs`, becomes a
 * QueueUnavailableError. `client.send` gets no per-call options, which would disable the SDK's cached
 * middleware stack.
 */
export function createSqsSender({ client, queueUrls, deadlineMs }: SqsSenderConfig): QueueSender {
  return {
    async send(message) {
      const encoded = encodeSqsMessage(message);
      const MessageAttributes = sqsAttributes(encoded);
      const sending = client.send(
        new SendMessageCommand({
          QueueUrl: queueUrls[message.queue],
          MessageBody: encoded.body,
          MessageGroupId: encoded.groupId,
          MessageDeduplicationId: encoded.deduplicationId,
          MessageAttributes,
        }),
      );
      try {
        await (deadlineMs === undefined ? sending : withDeadline(sending, deadlineMs));
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

/**
 * `promise`, or a TimeoutError after `ms`. The SDK call goes on and its outcome is dropped: a message
 * it still delivers is a duplicate of the sender's retry, which FIFO deduplication absorbs.
 */
function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error(`no answer within ${ms} ms`), { name: 'TimeoutError' })),
      ms,
    );
  });
  // A native promise is itself here; anything else (a test double's plain value) becomes one.
  const sending = Promise.resolve(promise);
  sending.catch(() => {});
  return Promise.race([sending, deadline]).finally(() => clearTimeout(timer));
}

export type { OutboundMessage };
