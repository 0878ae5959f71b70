/**
 * Runs one ingest case in a process of its own, with SQS at `AWS_ENDPOINT_URL_SQS` (the bench's
 * responder), as `functions/ingest.ts` runs in Lambda: environment read at import, clients built once.
 *
 *   ingest-driver cpu <rounds> <iterations>   alternating blocks of every case; CPU µs per event, as JSON, to BENCH_OUT
 *   ingest-driver count <case> <n>            a warm-up, then `n` events of one case (for valgrind)
 *
 * Cases: `handler` (the Lambda handler, the whole path), `floor` (JSON.parse + HMAC + the same
 * SendMessage alone, through an SQS client configured as well as it can be), and `logic` (the
 * handler's decision with a queue that acknowledges at once: headers, HMAC, parse, validate, route).
 */
import { createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { toDeliveryRequest } from '../../lib/ingest/apigateway.js';
import { handleDelivery } from '../../lib/ingest/index.js';
import type { QueueSender } from '../../lib/queue/port.js';
import { BENCH_SECRET, benchPolicy, realisticContactCreated } from './sample.js';

const { event, body } = realisticContactCreated();
const { handler } = await import('../../functions/ingest.js');
const sqs = new SQSClient({ cacheMiddleware: true, maxAttempts: 1 });
const queueUrl = process.env.CONTACT_QUEUE_URL!;
const policy = benchPolicy();
const acknowledge: QueueSender = { async send() {} };

const cases: Record<string, () => Promise<unknown>> = {
  async floor() {
    const parsed = JSON.parse(body) as { EventId: string; ContextIdentifier: string; PrimaryKey: number };
    createHmac('sha256', BENCH_SECRET).update(body).digest('base64');
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: body,
        MessageGroupId: `${parsed.ContextIdentifier}:contact:${parsed.PrimaryKey}`,
        MessageDeduplicationId: parsed.EventId,
      }),
    );
  },
  async handler() {
    const result = await handler(event);
    if (typeof result !== 'object' || result.statusCode !== 200)
      throw new Error(`answered ${JSON.stringify(result)}`);
  },
  async logic() {
    const response = await handleDelivery(toDeliveryRequest(event), policy, acknowledge);
    if (response.status !== 200) throw new Error(`answered ${response.status}`);
  },
};

async function cpuMicros(run: () => Promise<unknown>, iterations: number): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < iterations; i++) await run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / iterations;
}

const [mode, a = '0', b = '0'] = process.argv.slice(2);
if (mode === 'cpu') {
  const rounds = Number(a);
  const iterations = Number(b);
  const figures: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
  for (const run of Object.values(cases)) await cpuMicros(run, iterations);
  for (let round = 0; round < rounds; round++) {
    for (const [name, run] of Object.entries(cases)) figures[name]!.push(await cpuMicros(run, iterations));
  }
  writeFileSync(process.env.BENCH_OUT!, JSON.stringify(figures));
} else if (mode === 'count') {
  const run = cases[a];
  if (run === undefined) throw new Error(`unknown case ${a}`);
  for (let i = 0; i < 200; i++) await run();
  for (let i = 0; i < Number(b); i++) await run();
} else {
  throw new Error('usage: ingest-driver cpu <rounds> <iterations> | count <case> <n>');
}
sqs.destroy();
process.exit(0);
