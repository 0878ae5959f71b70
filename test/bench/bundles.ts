import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BuildOptions, build } from 'esbuild';
import { load } from 'js-yaml';
import { countInstructions, hasValgrind } from './valgrind.js';

export const FUNCTIONS = [
  'ingest',
  'contact-worker',
  'activity-worker',
  'entities-worker',
  'webhook-state-worker',
] as const;

/** The esbuild options serverless.yml packages with (one source: custom.esbuild). */
export function serverlessEsbuildOptions(): BuildOptions {
  const doc = load(readFileSync('serverless.yml', 'utf8')) as {
    custom: { esbuild: Record<string, unknown> };
  };
  const { bundle, minify, sourcemap, format, platform, target, mainFields, banner, alias, exclude } =
    doc.custom.esbuild;
  // serverless-esbuild passes `exclude` to esbuild as `external`.
  return {
    bundle,
    minify,
    sourcemap,
    format,
    platform,
    target,
    mainFields,
    banner,
    alias,
    external: exclude,
  } as BuildOptions;
}

/** Environment a function imports with (placeholders, as serverless.yml sets them; nothing is called). */
export const IMPORT_ENV = {
  CONTACT_QUEUE_URL: 'http://127.0.0.1:1/q/contact.fifo',
  ACTIVITY_QUEUE_URL: 'http://127.0.0.1:1/q/activity.fifo',
  WEBHOOK_STATE_QUEUE_URL: 'http://127.0.0.1:1/q/webhook-state.fifo',
  ENTITIES_QUEUE_URL: 'http://127.0.0.1:1/q/entities.fifo',
  PARKED_QUEUE_URL: 'http://127.0.0.1:1/q/parked.fifo',
  ROWS_TABLE: 'rows',
  EVENTS_TABLE: 'events',
  WEBHOOKS_TABLE: 'webhooks',
  WEBHOOK_SECRET: 'bench',
  // As deployed: the ingest builds its SSM provider and the state worker its SNS client at import.
  WEBHOOK_SECRETS_PARAMETER: '/crm-webhook-receiver/bench/webhook-secrets',
  ALERT_TOPIC_ARN: 'arn:aws:sns:eu-west-1:123456789012:crm-webhook-receiver-bench-alerts',
  // As deployed with subscriptions: the workers build their EventBridge client at import.
  PUBLISH_EVENTS: 'true',
  EVENT_BUS_NAME: 'crm-webhook-receiver-bench',
  AWS_REGION: 'eu-west-1',
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Milliseconds to import `file` in a fresh Node process, as a Lambda runtime's first `import()` does. */
function importMillis(file: string): number {
  const out = execFileSync(
    process.execPath,
    [
      '--no-warnings',
      '--input-type=module',
      '-e',
      `const t = performance.now(); await import(${JSON.stringify(file)}); console.log(performance.now() - t);`,
    ],
    { env: { ...process.env, ...IMPORT_ENV }, encoding: 'utf8' },
  );
  return Number(out.trim().split('\n').pop());
}

/** Instructions of a fresh Node process that imports `file` (valgrind), with the deployed environment. */
function importInstructions(file: string): number {
  return countInstructions(
    ['--no-warnings', '--input-type=module', '-e', `await import(${JSON.stringify(file)});`],
    {
      ...process.env,
      ...IMPORT_ENV,
    },
  );
}

/**
 * Builds each function as serverless.yml does, then prints the minified size and the time to import
 * it in a fresh Node process (median of `runs`), the cold-start share that the bundle controls.
 * Next to them, built the same way and imported in the same rounds, each function's floor: the AWS
 * SDK clients it constructs, alone. Absolute times on a shared machine drift; the ratio and the
 * milliseconds the function adds to its floor hold better. With valgrind, the same imports are also
 * counted in instructions (net of importing an empty module), a figure that does not drift.
 */
export async function benchBundles(runs = 15): Promise<Record<string, number | string>> {
  const dir = mkdtempSync(join(tmpdir(), 'bundles-'));
  const figures: Record<string, number | string> = {};
  try {
    const options = serverlessEsbuildOptions();
    const files: Record<string, string> = {};
    for (const name of FUNCTIONS) {
      files[name] = join(dir, `${name}.mjs`);
      await build({
        ...options,
        entryPoints: [`functions/${name}.ts`],
        outfile: files[name],
        logLevel: 'error',
      });
      figures[`${name} bundle KB`] = Number((statSync(files[name]).size / 1024).toFixed(1));
    }
    // Each function's floor: the AWS SDK clients it constructs, alone, built the same way.
    const DYNAMO =
      "import { DynamoDBClient } from '@aws-sdk/client-dynamodb'; import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb'; export const doc = DynamoDBDocumentClient.from(new DynamoDBClient({}));";
    const EVENTS =
      "import { EventBridgeClient } from '@aws-sdk/client-eventbridge'; export const events = new EventBridgeClient({});";
    const floors: Record<string, string> = {
      'SQS client':
        "import { SQSClient } from '@aws-sdk/client-sqs'; export const client = new SQSClient({});",
      'DynamoDB document and EventBridge clients': `${DYNAMO} ${EVENTS}`,
      'DynamoDB document, SNS and EventBridge clients': `${DYNAMO} ${EVENTS} import { SNSClient } from '@aws-sdk/client-sns'; export const sns = new SNSClient({});`,
    };
    const floorOf: Record<(typeof FUNCTIONS)[number], string> = {
      ingest: 'SQS client',
      'contact-worker': 'DynamoDB document and EventBridge clients',
      'activity-worker': 'DynamoDB document and EventBridge clients',
      'entities-worker': 'DynamoDB document and EventBridge clients',
      'webhook-state-worker': 'DynamoDB document, SNS and EventBridge clients',
    };
    for (const [name, contents] of Object.entries(floors)) {
      files[name] = join(dir, `floor-${Object.keys(files).length}.mjs`);
      await build({
        ...options,
        stdin: { contents, resolveDir: process.cwd(), loader: 'ts' },
        outfile: files[name],
        logLevel: 'error',
      });
    }
    // Rounds import every bundle once, so drift hits all of them alike.
    const times: Record<string, number[]> = Object.fromEntries(Object.keys(files).map((name) => [name, []]));
    for (let i = 0; i < runs; i++) {
      for (const [name, file] of Object.entries(files)) times[name]!.push(importMillis(file));
    }
    for (const name of FUNCTIONS) {
      const ms = median(times[name]!);
      const floor = median(times[floorOf[name]]!);
      figures[`${name} import ms`] =
        `${ms.toFixed(1)} (${floorOf[name]} alone ${floor.toFixed(1)}: ${(ms / floor).toFixed(2)}×, +${(ms - floor).toFixed(1)} ms)`;
    }
    figures['bundle goals'] = '≤ 350 KB minified, import ≤ 50 ms';
    if (!hasValgrind()) {
      figures['import instructions'] = 'valgrind not installed (apt-get install valgrind): skipped';
    } else {
      // The same imports counted in instructions, net of importing an empty module (Node's own start).
      files.empty = join(dir, 'empty.mjs');
      writeFileSync(files.empty, '');
      const counts: Record<string, number> = {};
      for (const [name, file] of Object.entries(files)) counts[name] = importInstructions(file);
      const net = (name: string) => (counts[name]! - counts.empty!) / 1e6;
      for (const name of FUNCTIONS) {
        const ours = net(name);
        const floor = net(floorOf[name]);
        figures[`${name} import M instructions`] =
          `${ours.toFixed(1)} (${floorOf[name]} alone ${floor.toFixed(1)}: ${(ours / floor).toFixed(2)}×, +${(ours - floor).toFixed(1)})`;
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}
