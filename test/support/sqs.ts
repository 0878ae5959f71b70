import type { AddressInfo } from 'node:net';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createSqsServer } from 'local-aws-sqs';
import { afterAll, beforeAll } from 'vitest';
import { sqsJsonReconcileQueue } from '../../lib/queue/sqs-json-reconcile.js';
import type { ReconcileQueue, ReconcileRequest } from '../../lib/reconcile/request.js';

export interface LocalSqs {
  endpoint: string;
  client: SQSClient;
  createFifoQueue(name: string, attributes?: Record<string, string>): Promise<string>;
  close(): Promise<void>;
}

/** local-aws-sqs on an ephemeral loopback port, with an SDK client pointed at it. */
export async function startLocalSqs(): Promise<LocalSqs> {
  const server = await createSqsServer({
    port: 0,
    hostname: '127.0.0.1',
    emulateQueueCreationLifecycle: false,
  });
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  return {
    endpoint,
    client,
    async createFifoQueue(name, attributes = {}) {
      const { QueueUrl } = await client.send(
        new CreateQueueCommand({
          QueueName: `${name}.fifo`,
          Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'false', ...attributes },
        }),
      );
      return QueueUrl!;
    },
    async close() {
      client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** {@link startLocalSqs} for a file's tests: started before them, stopped after (its fields there once they run). */
export function localSqsForFile(): LocalSqs {
  const sqs = {} as LocalSqs;
  beforeAll(async () => {
    Object.assign(sqs, await startLocalSqs());
  });
  afterAll(() => sqs.close?.());
  return sqs;
}

/** The reconcile queue's port on `queueUrl` of the local SQS, as the functions send to it. */
export function reconcileQueueOn(sqs: LocalSqs, queueUrl: string) {
  return sqsJsonReconcileQueue({
    queueUrl,
    region: 'us-east-1',
    endpoint: sqs.endpoint,
    credentials: async () => ({ accessKeyId: 'local', secretAccessKey: 'local' }),
  });
}

/** A reconcile queue port in front of `inner` that also counts what it was asked to send. */
export function countingQueue(inner?: ReconcileQueue) {
  const requests: ReconcileRequest[] = [];
  const queue: ReconcileQueue = {
    async enqueue(request) {
      requests.push(request);
      await inner?.enqueue(request);
    },
  };
  return { queue, requests };
}
