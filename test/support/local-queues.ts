import { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll } from 'vitest';
import { loadDefinitions } from '../../infra/definitions.js';
import type { QueueKey } from '../../lib/queue/port.js';
import { ensureQueues, type LocalQueue } from '../../local/emulators/resources.js';
import { type SqsEmulator, startSqsEmulator } from '../../local/emulators/sqs-emulator.js';

export interface LocalQueues {
  emulator: SqsEmulator;
  client: SQSClient;
  queues: LocalQueue[];
  /** Each queue's URL by its key, as the ingest and the reconcile send to them. */
  queueUrls: Record<QueueKey, string>;
  close(): Promise<void>;
}

type LocalQueuesOptions = { stage?: string; visibilityTimeout?: number; deduplicationMs?: number };

/**
 * The local runtime's SQS emulator with the queues of infra/resources.yml (as `npm start` creates
 * them) and an SDK client pointed at it.
 */
export async function startLocalQueues(options: LocalQueuesOptions = {}): Promise<LocalQueues> {
  const emulator = await startSqsEmulator(
    options.deduplicationMs === undefined ? {} : { deduplicationMs: options.deduplicationMs },
  );
  const client = new SQSClient({
    endpoint: emulator.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const queues = await ensureQueues(
    client,
    loadDefinitions({ stage: options.stage ?? 'local' }).queues,
    options.visibilityTimeout === undefined ? {} : { visibilityTimeout: options.visibilityTimeout },
  );
  const queueUrls = Object.fromEntries(queues.map((queue) => [queue.key, queue.url])) as Record<
    QueueKey,
    string
  >;
  return {
    emulator,
    client,
    queues,
    queueUrls,
    async close() {
      client.destroy();
      await emulator.close();
    },
  };
}

/** {@link startLocalQueues} for a file's tests: started before them, stopped after (its fields there once they run). */
export function localQueuesForFile(options: LocalQueuesOptions = {}): LocalQueues {
  const local = {} as LocalQueues;
  beforeAll(async () => {
    Object.assign(local, await startLocalQueues(options));
  });
  afterAll(() => local.close?.());
  return local;
}
