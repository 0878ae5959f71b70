import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { runSimulation } from '../../infra/local/simulate.js';
import { spawnLocalRuntime } from '../support/local-runtime.js';

const SECRET = 'bench-secret';
const CONCURRENCY = 50;

/**
 * The local end-to-end rate: `npm start` in a child process, `simulate` with 50 concurrent senders
 * (shuffled, with duplicates), events per second from the first POST to the last row written and the
 * POST latency; next to the emulators' own raw rates (SQS SendMessage/s, dynalite PutItem/s) measured
 * against the same emulators in the same run, with the same concurrency.
 */
export async function benchLocal(
  options: { events?: number; rows?: number } = {},
): Promise<Record<string, number | string>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'crm-local-bench-'));
  const runtime = await spawnLocalRuntime({ dataDir, env: { WEBHOOK_SECRET: SECRET } });
  try {
    const readyLine = /ready in (\d+) ms/.exec(runtime.output());
    const info = (await (await fetch(`${runtime.adminUrl}/info`)).json()) as {
      urls: { sqs: string; dynamodb: string };
    };
    const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
    const sqs = new SQSClient({ endpoint: info.urls.sqs, region: 'us-east-1', credentials });
    const dynamodb = new DynamoDBClient({ endpoint: info.urls.dynamodb, region: 'us-east-1', credentials });

    const sqsRate = await rawSqsSendRate(sqs, 2000);
    const dynamoRate = await rawDynamoPutRate(dynamodb, 2000);
    sqs.destroy();
    dynamodb.destroy();

    const report = await runSimulation({
      url: runtime.webhookUrl,
      adminUrl: runtime.adminUrl,
      secret: SECRET,
      events: options.events ?? 2000,
      rows: options.rows ?? 200,
      duplicates: 2,
      shuffle: true,
      concurrency: CONCURRENCY,
      seed: 7,
    });
    return {
      'npm start → ready (ms, spawn to ready line)': runtime.readyMs,
      'ready line (ms, process start to ready)': readyLine ? Number(readyLine[1]) : 'n/a',
      'simulate events / rows / deliveries': `${report.events} / ${report.rows} / ${report.deliveries}`,
      'simulate accepted / retried / discarded': `${report.accepted} / ${report.retried} / ${report.discarded}`,
      'simulate mismatches': report.mismatches,
      'local e2e events/s (POST → row written)': report.eventsPerSecond,
      'local POSTs/s while sending (50 senders)': report.postsPerSecond,
      'local POST latency p50 (ms)': report.p50Ms,
      'local POST latency p99 (ms)': report.p99Ms,
      'local send + drain (s)': `${(report.sendMs / 1000).toFixed(1)} + ${(report.drainMs / 1000).toFixed(1)}`,
      'raw local-aws-sqs SendMessage/s (50 conc.)': sqsRate,
      'raw dynalite PutItem/s (50 conc.)': dynamoRate,
      'e2e events/s ÷ raw PutItem/s': Math.round((report.eventsPerSecond / dynamoRate) * 1000) / 1000,
    };
  } finally {
    await runtime.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** SendMessage/s of local-aws-sqs on a scratch FIFO queue, CONCURRENCY at a time. */
export async function rawSqsSendRate(client: SQSClient, count: number): Promise<number> {
  const { QueueUrl } = await client.send(
    new CreateQueueCommand({ QueueName: 'bench-raw.fifo', Attributes: { FifoQueue: 'true' } }),
  );
  const body = 'x'.repeat(2048);
  return rate(count, (i) =>
    client.send(
      new SendMessageCommand({
        QueueUrl,
        MessageBody: body,
        MessageGroupId: `g${i % 200}`,
        MessageDeduplicationId: `m${i}`,
      }),
    ),
  );
}

/** Conditional PutItem/s of dynalite on a scratch table, CONCURRENCY at a time. */
export async function rawDynamoPutRate(client: DynamoDBClient, count: number): Promise<number> {
  await client.send(
    new CreateTableCommand({
      TableName: 'bench-raw',
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  const payload = 'x'.repeat(1024);
  return rate(count, (i) =>
    client.send(
      new PutItemCommand({
        TableName: 'bench-raw',
        Item: { pk: { S: `row#${i}` }, payload: { S: payload }, version: { N: '1' } },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    ),
  );
}

/** Operations per second of `count` calls, CONCURRENCY at a time. */
async function rate(count: number, call: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) await call(next++);
    }),
  );
  return Math.round(count / ((performance.now() - started) / 1000));
}
