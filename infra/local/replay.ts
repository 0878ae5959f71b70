import type { SQSClient } from '@aws-sdk/client-sqs';
import { readIngestConfig } from '../../lib/config/ingest.js';
import {
  deliveryPolicy,
  type ReplayFilter,
  type ReplayReport,
  replayParked,
} from '../../lib/ingest/index.js';
import { createSqsSender } from '../../lib/queue/sqs.js';
import { createSqsParkedSource } from '../../lib/queue/sqs-parked.js';
import type { LocalQueue } from './resources.js';

/**
 * POST /parked/replay of the local admin API and the dashboard: the parked queue decided again with the ingest's
 * configuration as it is now (ENTITIES, ALLOW_UNSIGNED, secrets, ... read from the environment the
 * functions read).
 */
export function replayLocalParked(
  sqs: SQSClient,
  queues: readonly LocalQueue[],
  env: NodeJS.ProcessEnv,
  options: ReplayFilter,
): Promise<ReplayReport> {
  const config = readIngestConfig(env);
  const parked = queues.find((queue) => queue.key === 'parked');
  if (parked === undefined) throw new Error('the local runtime has no parked queue');
  return replayParked({
    source: createSqsParkedSource({ client: sqs, queueUrl: parked.url }),
    sender: createSqsSender({ client: sqs, queueUrls: config.queueUrls }),
    policy: deliveryPolicy(config),
    ...options,
  });
}
