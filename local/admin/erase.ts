import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createEventBridgePublisher } from '../../lib/bus/publisher.js';
import { readBusConfig } from '../../lib/config/bus.js';
import {
  type ErasureQueue,
  type ErasureReport,
  type ErasureTarget,
  eraseOnRequest,
} from '../../lib/erasure/request.js';
import { sqsErasureQueue } from '../../lib/erasure/sqs-queues.js';
import { createDynamoReplayLock, type Store } from '../../lib/store/index.js';
import type { LocalBus } from '../bus/types.js';
import type { LocalQueue } from '../emulators/resources.js';

export interface LocalErasureDeps {
  store: Store;
  sqs: SQSClient;
  queues: readonly LocalQueue[];
  /** The functions' environment: whether and where `receiver.row.erased` is published. */
  env: NodeJS.ProcessEnv;
  doc: DynamoDBDocumentClient;
  webhooksTable: string;
  /** The local bus: its subscriptions' deliveries still to do and dead letters. */
  bus?: Pick<LocalBus, 'erase'>;
}

/**
 * POST /erase of the local admin API: the erasure on request (lib/erasure/request.ts) over the local
 * tables, the parked queue (under the replay's lock), every queue's DLQ and the local bus's deliveries
 * and dead letters; `receiver.row.erased` published on the local bus when the functions publish.
 */
export function eraseLocal(deps: LocalErasureDeps, target: ErasureTarget): Promise<ErasureReport> {
  const lock = createDynamoReplayLock({ client: deps.doc, table: deps.webhooksTable });
  const queues: ErasureQueue[] = deps.queues.flatMap((queue) => [
    ...(queue.key === 'parked' ? [sqsErasureQueue(deps.sqs, queue, lock)] : []),
    sqsErasureQueue(deps.sqs, queue.dlq),
  ]);
  const localBus = deps.bus;
  if (localBus !== undefined)
    queues.push({
      name: 'bus',
      sweep: async (carries) => ({ removed: localBus.erase(carries), complete: true }),
    });
  const busConfig = readBusConfig(deps.env);
  const publisher =
    busConfig.publish && busConfig.eventBusName !== undefined
      ? createEventBridgePublisher({
          client: new EventBridgeClient({ endpoint: deps.env.AWS_ENDPOINT_URL_EVENTBRIDGE }),
          eventBusName: busConfig.eventBusName,
        })
      : undefined;
  return eraseOnRequest({ store: deps.store, queues, publisher }, target);
}
