import type { AnyQueueKey } from '../lib/queue/port.js';
import { alarm, kebab, pascal, type Template } from './alarm.js';
import type { QueueDefinition } from './definitions.js';

/** What waits in each queue's dead-letter queue after `receives` receives, and what to do about it. */
const WHAT_WAITS: Record<AnyQueueKey, (receives: number) => string> = {
  contact: (n) => `Contact events failed ${n} times and wait in the DLQ (npm run ops -- redrive).`,
  activity: (n) => `Activity events failed ${n} times and wait in the DLQ (npm run ops -- redrive).`,
  entities: (n) =>
    `Events of the other entities (person, sale, lists, custom tables, ...) failed ${n} times and wait in the DLQ (npm run ops -- redrive).`,
  webhookState: (n) => `Webhook state events failed ${n} times and wait in the DLQ (npm run ops -- redrive).`,
  parked: (n) => `Parked deliveries were received ${n} times and moved to the parked DLQ.`,
  reconcile: (n) =>
    `A reconcile request failed ${n} times and waits in the reconcile DLQ: its rows may stay stale (the ` +
    "reconcile function's log says why; npm run ops -- redrive reconcile).",
};

/**
 * One alarm per dead-letter queue of infra/resources.yml (`<Key>DeadLetterQueueAlarm`): a message in
 * it, within a minute; its description says how many receives put it there (the queue's maxReceiveCount).
 */
export function deadLetterAlarms(prefix: string, queues: readonly QueueDefinition[]): Template {
  const resources: Template = {};
  for (const queue of queues) {
    const dlq = `${pascal(queue.key)}DeadLetterQueue`;
    resources[`${dlq}Alarm`] = alarm({
      AlarmName: `${prefix}-${kebab(queue.key)}-dlq-not-empty`,
      AlarmDescription: WHAT_WAITS[queue.key](queue.dlq.maxReceiveCount),
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [dlq, 'QueueName'] } }],
      Statistic: 'Maximum',
      Period: 60,
    });
  }
  return resources;
}
