import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { readCrmConfig } from '../lib/config/crm.js';
import { requireEnv } from '../lib/config/env.js';
import { type ReconcileQueue, reconcileMessage } from '../lib/reconcile/request.js';

/**
 * The reconcile queue's port on SQS (one SendMessage per request, its group and dedup id from
 * `reconcileMessage`). A stand-in until lib/reconcile/sqs-queue.ts (h-a2) lands: the lead keeps one.
 */
export function sqsReconcileQueue(client: SQSClient, queueUrl: string): ReconcileQueue {
  return {
    async enqueue(request) {
      const message = reconcileMessage(request);
      await client.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: message.body,
          MessageGroupId: message.groupId,
          MessageDeduplicationId: message.deduplicationId,
        }),
      );
    },
  };
}

/**
 * The reconcile queue from the environment (RECONCILE_QUEUE_URL, required with CRM_API_URL), or undefined when reconciliation is
 * off (no CRM_API_URL): then gaps are recorded and announced, and nothing is enqueued.
 */
export function reconcileQueueFromEnv(env = process.env): ReconcileQueue | undefined {
  if (!readCrmConfig(env).enabled) return undefined;
  return sqsReconcileQueue(new SQSClient({}), requireEnv('RECONCILE_QUEUE_URL', env));
}
