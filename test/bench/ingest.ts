import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { toDeliveryRequest } from '../../lib/apigateway.js';
import { handleDelivery } from '../../lib/ingest/index.js';
import type { QueueSender } from '../../lib/queue/port.js';
import { benchPolicy, realisticContactCreated, BENCH_SECRET as SECRET } from './sample.js';
import { countInstructions, hasValgrind } from './valgrind.js';

function cpuMicros(run: () => void, iterations: number): number {
  const start = process.cpuUsage();
  for (let i = 0; i < iterations; i++) run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / iterations;
}

async function cpuMicrosAsync(run: () => Promise<unknown>, iterations: number): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < iterations; i++) await run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / iterations;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * CPU time per event of the ingest path (API Gateway event → decision → message handed to a queue
 * that acknowledges at once) next to the floor: JSON.parse plus HMAC-SHA256 of the same body.
 * Short blocks alternate the two so both see the same machine state; the ratio is that of the
 * totals.
 */
export async function benchIngestCpu(
  iterations = 2_000,
  rounds = 75,
): Promise<Record<string, number | string>> {
  const { event, body } = realisticContactCreated();
  const policy = benchPolicy();
  let sink = 0;
  const queue: QueueSender = {
    async send(message) {
      sink += message.body.length;
    },
  };
  const floor = () => {
    const parsed = JSON.parse(body) as { EventId: string };
    const mac = createHmac('sha256', SECRET).update(body).digest('base64');
    sink += parsed.EventId.length + mac.length;
  };
  const ingest = async () => {
    const response = await handleDelivery(toDeliveryRequest(event), policy, queue);
    if (response.status !== 200)
      throw new Error(`bench delivery answered ${response.status}: ${response.body}`);
  };
  await cpuMicrosAsync(ingest, 2000);
  cpuMicros(floor, 2000);
  const ours: number[] = [];
  const floors: number[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const floorMicros = cpuMicros(floor, iterations);
    const oursMicros = await cpuMicrosAsync(ingest, iterations);
    floors.push(floorMicros);
    ours.push(oursMicros);
    ratios.push(oursMicros / floorMicros);
  }
  if (sink === 0) throw new Error('unreachable');
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  const sorted = [...ratios].sort((a, b) => a - b);
  const quartile = (q: number) => sorted[Math.floor((sorted.length - 1) * q)]!.toFixed(2);
  return {
    'ingest body bytes': Buffer.byteLength(body),
    'ingest CPU µs/event': Number(median(ours).toFixed(2)),
    'floor (JSON.parse + HMAC) µs/event': Number(median(floors).toFixed(2)),
    // Many short blocks, the two back to back: drift in the machine's speed hits both alike, and the
    // ratio of the totals weighs every block by its length.
    'ingest / floor': `${(sum(ours) / sum(floors)).toFixed(2)} (${rounds} alternating blocks of ${iterations}; middle half of block ratios ${quartile(0.25)}–${quartile(0.75)})`,
    'ingest goal': '≤ 1.5× (stretch 1.3×)',
  };
}

/**
 * Instructions per event of the ingest path and of the floor, counted by valgrind (callgrind) as the
 * difference between a run of N events and a run of none. Unlike CPU time, the count does not move
 * with the machine's load, so the ratio is the one to compare across runs.
 */
export async function benchIngestInstructions(events = 2500): Promise<Record<string, number | string>> {
  if (!hasValgrind()) {
    return { 'ingest instructions': 'valgrind not installed (apt-get install valgrind): skipped' };
  }
  const dir = mkdtempSync(join(tmpdir(), 'bench-instructions-'));
  try {
    const bundle = join(dir, 'driver.mjs');
    await build({
      entryPoints: ['test/bench/instructions-driver.ts'],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      outfile: bundle,
      logLevel: 'error',
    });
    const instructions = (name: string, count: number) =>
      countInstructions(['--no-warnings', bundle, name, String(count)]);
    const perEvent = (name: string) => (instructions(name, events) - instructions(name, 0)) / events;
    const floor = perEvent('floor');
    const floorValidation = perEvent('floor+validation');
    const ingest = perEvent('ingest');
    return {
      'floor instructions/event': Math.round(floor),
      'floor + validation instructions/event': Math.round(floorValidation),
      'ingest instructions/event': Math.round(ingest),
      'ingest / floor (instructions)': Number((ingest / floor).toFixed(2)),
      'validation share of the ingest': `${(((floorValidation - floor) / ingest) * 100).toFixed(0)} %`,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
