import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { type ReconcileQueue, type ReconcileRequest, reconcileMessage } from '../reconcile/request.js';
import { QueueUnavailableError } from './port.js';

export interface SqsReconcileQueueConfig {
  client: SQSClient;
  /** RECONCILE_QUEUE_URL: the reconcile FIFO queue of infra/resources.yml. */
  queueUrl: string;
}

/**
 * The {@link ReconcileQueue} port on SQS: each request is one message of the reconcile FIFO queue,
 * grouped by context and deduplicated by {@link reconcileMessage} (the same request twice within
 * SQS's 5 minutes is one run). A refused or unanswered SendMessage (after the SDK's retries) is a
 * QueueUnavailableError naming the reconcile queue; the request itself is never logged (it is the
 * caller's to retry or report).
 *
 * @example await createSqsReconcileQueue({ client, queueUrl }).enqueue({ context: 'Cust1', reason: 'manual', from, requestedAt })
 */
export function createSqsReconcileQueue({ client, queueUrl }: SqsReconcileQueueConfig): ReconcileQueue {
  return {
    async enqueue(request: ReconcileRequest) {
      const message = reconcileMessage(request);
      try {
        await client.send(
          new SendMessageCommand({
            QueueUrl: queueUrl,
            MessageBody: message.body,
            MessageGroupId: message.groupId,
            MessageDeduplicationId: message.deduplicationId,
          }),
        );
      } catch (error) {
        const name = error instanceof Error ? error.name : 'UnknownError';
        throw new QueueUnavailableError(`SendMessage to the reconcile queue failed: ${name}`, 'reconcile', {
          cause: error,
        });
      }
    },
  };
}
