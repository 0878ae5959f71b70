import { SQSClient } from '@aws-sdk/client-sqs';
import { loadDefinitions } from '../../infra/definitions.js';
import { ensureQueues, type LocalQueue } from '../../local/emulators/resources.js';
import { type SqsEmulator, startSqsEmulator } from '../../local/emulators/sqs-emulator.js';

export interface LocalQueues {
  emulator: SqsEmulator;
  client: SQSClient;
  queues: LocalQueue[];
  close(): Promise<void>;
}

/**
 * The local runtime's SQS emulator with the queues of infra/resources.yml (as `npm start` creates
 * them) and an SDK client pointed at it.
 */
export async function startLocalQueues(
  options: { stage?: string; visibilityTimeout?: number; deduplicationMs?: number } = {},
): Promise<LocalQueues> {
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
  return {
    emulator,
    client,
    queues,
    async close() {
      client.destroy();
      await emulator.close();
    },
  };
}
