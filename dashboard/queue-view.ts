import { GetQueueAttributesCommand, type QueueAttributeName, type SQSClient } from '@aws-sdk/client-sqs';
import type { QueueView } from './views.js';

/** A queue and its dead-letter queue, by name and URL (a LocalQueue, or names from stack outputs). */
export interface QueueNames {
  key: string;
  name: string;
  url: string;
  dlq: { name: string; url: string };
}

const ATTRIBUTES: QueueAttributeName[] = [
  'ApproximateNumberOfMessages',
  'ApproximateNumberOfMessagesNotVisible',
  'ApproximateNumberOfMessagesDelayed',
];

/** A queue's depths from two GetQueueAttributes calls (queue and DLQ): nothing is received. */
export async function queueView(sqs: SQSClient, queue: QueueNames): Promise<QueueView> {
  const [main, dlq] = await Promise.all(
    [queue.url, queue.dlq.url].map(async (QueueUrl) => {
      const { Attributes = {} } = await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ATTRIBUTES }),
      );
      return {
        visible: Number(Attributes.ApproximateNumberOfMessages ?? 0),
        inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
        delayed: Number(Attributes.ApproximateNumberOfMessagesDelayed ?? 0),
      };
    }),
  );
  return {
    key: queue.key,
    name: queue.name,
    visible: main!.visible,
    inFlight: main!.inFlight,
    delayed: main!.delayed,
    dlq: dlq!.visible + dlq!.inFlight,
    dlqName: queue.dlq.name,
  };
}
