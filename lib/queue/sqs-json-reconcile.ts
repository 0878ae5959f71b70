import { type AwsJsonEndpointConfig, awsErrorType, awsJsonCall } from '../aws/json-call.js';
import { type ReconcileQueue, reconcileMessage } from '../reconcile/request.js';

/** `endpoint`: AWS_ENDPOINT_URL_SQS when set (the local runtime's queues), else the regional endpoint. */
export interface SqsJsonQueueConfig extends AwsJsonEndpointConfig {
  queueUrl: string;
  /** How long one SendMessage may take (default 5000): a failure fails the trigger's record, which SQS retries. */
  timeoutMs?: number;
}

/**
 * The ReconcileQueue port as one signed SendMessage call (SQS's JSON protocol) instead of the SQS
 * client: the webhook-state worker sends a request per gap, and the client would add about 47 KB to
 * its bundle, over the 350 KB budget (docs/deploy.md, "Bundles"). Group and deduplication id from
 * {@link reconcileMessage}. Throws a one-line error naming the queue's answer.
 */
export function sqsJsonReconcileQueue(config: SqsJsonQueueConfig): ReconcileQueue {
  const call = awsJsonCall({ ...config, service: 'sqs', contentType: 'application/x-amz-json-1.0' });
  const timeoutMs = config.timeoutMs ?? 5000;
  return {
    async enqueue(request) {
      const message = reconcileMessage(request);
      const send = await call('AmazonSQS.SendMessage', {
        QueueUrl: config.queueUrl,
        MessageBody: message.body,
        MessageGroupId: message.groupId,
        MessageDeduplicationId: message.deduplicationId,
      });
      const response = await send(timeoutMs);
      const text = await response.text();
      if (!response.ok)
        throw new Error(
          `SendMessage to the reconcile queue failed: ${awsErrorType(text) ?? `HTTP ${response.status}`}`,
        );
    },
  };
}
