import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { readIngestConfig } from '../../lib/config/ingest.js';
import {
  deliveryPolicy,
  type ReplayFilter,
  type ReplayReport,
  replayParked,
} from '../../lib/ingest/index.js';
import { createSqsSender } from '../../lib/queue/sqs.js';
import { createSqsParkedSource } from '../../lib/queue/sqs-parked.js';
import { createDynamoReplayLock } from '../../lib/store/index.js';
import type { LocalQueue } from '../emulators/resources.js';

export interface LocalReplayDeps {
  sqs: SQSClient;
  queues: readonly LocalQueue[];
  /** The functions' environment: the settings a replay decides with. */
  env: NodeJS.ProcessEnv;
  /** Where the replay lock is held: the webhooks table, as on a stage. */
  doc: DynamoDBDocumentClient;
  webhooksTable: string;
}

/**
 * POST /parked/replay of the local admin API and the dashboard: the parked queue decided again with the ingest's
 * configuration as it is now (ENTITIES, ALLOW_UNSIGNED, secrets, ... read from the environment the
 * functions read), one replay at a time (the same lock as on a stage, in the local webhooks table).
 */
export function replayLocalParked(deps: LocalReplayDeps, options: ReplayFilter): Promise<ReplayReport> {
  const config = readIngestConfig(deps.env);
  const parked = deps.queues.find((queue) => queue.key === 'parked');
  if (parked === undefined) throw new Error('the local runtime has no parked queue');
  return replayParked({
    source: createSqsParkedSource({ client: deps.sqs, queueUrl: parked.url }),
    sender: createSqsSender({ client: deps.sqs, queueUrls: config.queueUrls }),
    policy: deliveryPolicy(config),
    lock: createDynamoReplayLock({ client: deps.doc, table: deps.webhooksTable }),
    ...options,
  });
}
