import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { ALL_QUEUE_KEYS, queueOutputs, tableOutput } from '../../infra/definitions.js';
import { createEventBridgePublisher } from '../../lib/bus/publisher.js';
import { type ErasureReport, eraseOnRequest } from '../../lib/erasure/request.js';
import { sqsErasureQueue, sqsStandardErasureQueue } from '../../lib/erasure/sqs-queues.js';
import { ErasureTargetError, erasureTarget } from '../../lib/erasure/target.js';
import { ReplayBusyError } from '../../lib/ingest/index.js';
import { createDynamoReplayLock } from '../../lib/store/index.js';
import { type OpsClients, OpsError, output, type StackOutputs, stageStore } from './commands.js';

/** `--context`, `--entity`, `--id` as the command line gave them. */
export interface EraseOptions {
  context?: string | undefined;
  entity?: string | undefined;
  id?: string | undefined;
}

/**
 * `npm run ops -- erase`: the erasure on request (lib/erasure/request.ts) on a stage: the row (or every
 * row of the context), its history, the parked queue (under the replay's lock), every queue's DLQ and
 * every subscription's DLQ;
 * `receiver.row.erased` on the stage's bus. The stage keeps no bus archive (infra/resources.yml has
 * none), so there is none to erase. A wrong option is one line naming it, nothing erased.
 */
export async function erase(
  clients: OpsClients & { eventBridge: EventBridgeClient },
  outputs: StackOutputs,
  options: EraseOptions,
): Promise<ErasureReport & { busArchive: string }> {
  let target: ReturnType<typeof erasureTarget>;
  try {
    target = erasureTarget(options);
  } catch (error) {
    if (error instanceof ErasureTargetError) throw new OpsError(`--${error.message}`);
    throw error;
  }
  const lock = createDynamoReplayLock({
    client: clients.dynamo,
    table: output(outputs, tableOutput('webhooks')),
  });
  const queue = (name: string, url: string, withLock?: boolean) =>
    sqsErasureQueue(clients.sqs, { name, url: output(outputs, url) }, withLock ? lock : undefined);
  const queues = [
    queue('parked', queueOutputs('parked').url, true),
    ...ALL_QUEUE_KEYS.map((key) => queue(`${key}-dlq`, queueOutputs(key).dlqUrl)),
    // The subscriptions' DLQs: the events EventBridge could not deliver, the row's data in their detail.
    ...Object.entries(outputs).flatMap(([key, url]) => {
      const name = /^(.+)SubscriptionDeadLetterQueueUrl$/.exec(key)?.[1];
      return name === undefined ? [] : [sqsStandardErasureQueue(clients.sqs, { name: `${name}-dlq`, url })];
    }),
  ];
  const busName = outputs.EventBusName;
  const publisher =
    busName === undefined
      ? undefined
      : createEventBridgePublisher({ client: clients.eventBridge, eventBusName: busName });
  const report = await eraseOnRequest(
    { store: stageStore(clients, outputs), queues, publisher },
    target,
  ).catch((error: unknown) => {
    if (error instanceof ReplayBusyError)
      throw new OpsError(`${error.message}; run the erasure again after it`);
    throw error;
  });
  return { ...report, busArchive: 'none: the stage keeps no archive of its bus' };
}
