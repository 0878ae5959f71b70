/**
 * Run under valgrind by `benchIngestInstructions`: warms a case up, then runs it `n` more times.
 * The difference between n = N and n = 0 divided by N is the instruction count of one event,
 * whatever else the machine is doing.
 */
import { createHmac } from 'node:crypto';
import { toDeliveryRequest } from '../../lib/apigateway.js';
import { validEvent } from '../../lib/events/index.js';
import { handleDelivery } from '../../lib/ingest/index.js';
import type { QueueSender } from '../../lib/queue/port.js';
import { BENCH_SECRET, benchPolicy, realisticContactCreated } from './sample.js';

const { event, body } = realisticContactCreated();
const policy = benchPolicy();
const queue: QueueSender = { async send() {} };

const cases: Record<string, () => Promise<unknown>> = {
  floor: async () => {
    JSON.parse(body);
    createHmac('sha256', BENCH_SECRET).update(body).digest('base64');
  },
  'floor+validation': async () => {
    validEvent(JSON.parse(body));
    createHmac('sha256', BENCH_SECRET).update(body).digest('base64');
  },
  ingest: async () => {
    const response = await handleDelivery(toDeliveryRequest(event), policy, queue);
    if (response.status !== 200) throw new Error(`answered ${response.status}`);
  },
};

const [name = 'ingest', count = '0'] = process.argv.slice(2);
const run = cases[name];
if (run === undefined) throw new Error(`unknown case ${name}`);
for (let i = 0; i < 3000; i++) await run();
for (let i = 0, n = Number(count); i < n; i++) await run();
