import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { QUEUE_ENV_VARS } from '../../lib/queue/port.js';
import { BENCH_SECRET, realisticContactCreated } from './sample.js';
import { startSqsResponder } from './sqs-responder.js';
import { countInstructions, hasValgrind } from './valgrind.js';

/**
 * The ingest as a delivery pays for it: `functions/ingest.ts`'s handler per event, SQS answered at
 * once by a responder in another process, next to its floor (JSON.parse + HMAC + the same
 * SendMessage alone through a well-configured SDK client) and to the handler's own logic (the
 * decision with a queue that acknowledges at once). Each case runs in a fresh process, bundled as
 * the deployment bundles it; the responder's CPU is not counted.
 */
async function withDriver<T>(run: (bundle: string, env: NodeJS.ProcessEnv) => T | Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-ingest-'));
  const responder = await startSqsResponder();
  try {
    const bundle = join(dir, 'driver.mjs');
    await build({
      entryPoints: ['test/bench/ingest-driver.ts'],
      bundle: true,
      minify: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      outfile: bundle,
      logLevel: 'error',
      banner: {
        js: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
      },
    });
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...Object.fromEntries(
        Object.values(QUEUE_ENV_VARS).map((name) => [name, `${responder.url}/000000000000/${name}.fifo`]),
      ),
      AWS_ENDPOINT_URL_SQS: responder.url,
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'bench',
      AWS_SECRET_ACCESS_KEY: 'bench',
      WEBHOOK_SECRET: BENCH_SECRET,
      // As deployed: INFO logs (accepted deliveries log nothing), metrics on.
      POWERTOOLS_LOG_LEVEL: 'INFO',
      POWERTOOLS_METRICS_DISABLED: 'false',
      POWERTOOLS_SERVICE_NAME: 'crm-webhook-receiver',
      POWERTOOLS_METRICS_NAMESPACE: 'CrmWebhookReceiver',
      AWS_SDK_JS_SUPPRESS_NODE_VERSION_WARNING: '1',
      // Under valgrind a request runs about 50 times slower: the answer budget is not what is measured.
      ENQUEUE_TIMEOUT_MS: '600000',
    };
    return await run(bundle, env);
  } finally {
    responder.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** CPU µs per event of each case, over alternating blocks in one process; ratios of the totals. */
export async function benchIngestCpu(
  rounds = 30,
  iterations = 300,
): Promise<Record<string, number | string>> {
  const figures = await withDriver((bundle, env) => {
    const out = join(tmpdir(), `bench-ingest-${process.pid}.json`);
    const result = spawnSync(
      process.execPath,
      ['--no-warnings', bundle, 'cpu', String(rounds), String(iterations)],
      {
        env: { ...env, BENCH_OUT: out },
        stdio: ['ignore', 'ignore', 'pipe'],
        encoding: 'utf8',
      },
    );
    if (result.status !== 0) throw new Error(`ingest driver failed: ${result.stderr.slice(-800)}`);
    const parsed = JSON.parse(readFileSync(out, 'utf8')) as Record<'handler' | 'floor' | 'logic', number[]>;
    rmSync(out, { force: true });
    return parsed;
  });
  const { handler, floor, logic } = figures;
  return {
    'ingest body bytes': Buffer.byteLength(realisticContactCreated().body),
    'handler CPU µs/event (the whole path)': Number(median(handler).toFixed(1)),
    'floor CPU µs/event (parse + HMAC + SendMessage)': Number(median(floor).toFixed(1)),
    'logic CPU µs/event (decision, queue acks at once)': Number(median(logic).toFixed(1)),
    'handler / floor': `${(sum(handler) / sum(floor)).toFixed(2)} (${rounds} alternating blocks of ${iterations})`,
    'logic share of the handler': `${((sum(logic) / sum(handler)) * 100).toFixed(0)} %`,
  };
}

/**
 * The same cases in instructions counted by valgrind (callgrind), per event as the difference
 * between a run of N events and a run of none: unlike CPU time, it does not move with the machine's load.
 */
export async function benchIngestInstructions(events = 400): Promise<Record<string, number | string>> {
  if (!hasValgrind()) {
    return { 'ingest instructions': 'valgrind not installed (apt-get install valgrind): skipped' };
  }
  return withDriver((bundle, env) => {
    const perEvent = (name: string) => {
      const count = (n: number) =>
        countInstructions(['--no-warnings', bundle, 'count', name, String(n)], env);
      return (count(events) - count(0)) / events;
    };
    const handler = perEvent('handler');
    const floor = perEvent('floor');
    const logic = perEvent('logic');
    return {
      'handler instructions/event': Math.round(handler),
      'floor instructions/event': Math.round(floor),
      'logic instructions/event': Math.round(logic),
      'handler / floor (instructions)': Number((handler / floor).toFixed(2)),
      'logic share of the handler (instructions)': `${((logic / handler) * 100).toFixed(0)} %`,
    };
  });
}
