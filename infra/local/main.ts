import { relative } from 'node:path';
import { loadEnvFile } from './env-file.js';
import { startLocalRuntime } from './runtime.js';

/**
 * `npm start`: the whole receiver on this machine. Configuration comes from the environment and an
 * optional `.env` file (ENV_FILE names another), the same variables as on AWS plus PORT, HOST,
 * ADMIN_PORT, DATA_DIR, SQS_PORT, DYNAMODB_PORT and LOCAL_VISIBILITY_TIMEOUT.
 */
const envFile = loadEnvFile(process.env.ENV_FILE ?? '.env');
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** A path relative to the working directory when it is below it, else absolute. */
const display = (path: string): string => {
  const relativePath = relative(process.cwd(), path);
  return relativePath === '' ? '.' : relativePath.startsWith('..') ? path : relativePath;
};

const port = (name: string, fallback: number): number => {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65_535) {
    console.error(`${name} must be a port number (0 picks a free one), not ${JSON.stringify(raw)}`);
    process.exit(2);
  }
  return value;
};

try {
  const runtime = await startLocalRuntime({
    dataDir: process.env.DATA_DIR?.trim() || '.data',
    host: process.env.HOST?.trim() || '127.0.0.1',
    port: port('PORT', 3000),
    adminPort: port('ADMIN_PORT', 3001),
    sqsPort: port('SQS_PORT', 0),
    dynamodbPort: port('DYNAMODB_PORT', 0),
    visibilityTimeout: process.env.LOCAL_VISIBILITY_TIMEOUT ? port('LOCAL_VISIBILITY_TIMEOUT', 0) : undefined,
  });
  const data = display(runtime.dataDir);
  if (envFile) console.log(`loaded ${envFile}`);
  if (runtime.secret.source === 'generated') {
    console.log(
      [
        '',
        `No WEBHOOK_SECRET configured: generated one and saved it to ${display(runtime.secret.path!)}.`,
        `  WEBHOOK_SECRET=${runtime.secret.value}`,
        'Register it as the webhook secret in the CRM, or set your own in the environment or in .env',
        '(WEBHOOK_SECRET=..., or WEBHOOK_SECRETS={"<context>":["..."]}). npm run send signs with it.',
        '',
      ].join('\n'),
    );
  } else if (runtime.secret.source === 'data-dir') {
    console.log(`using the webhook secret generated earlier (${display(runtime.secret.path!)})`);
  } else if (runtime.secret.source === 'unsigned') {
    console.log('ALLOW_UNSIGNED=true: contexts without a secret accept unsigned deliveries');
  }
  console.log(
    `ready in ${Math.round(process.uptime() * 1000)} ms: POST ${runtime.urls.webhook} · admin ${runtime.urls.admin} · ` +
      `dashboard ${runtime.urls.dashboard} · ` +
      `sqs ${runtime.urls.sqs} · dynamodb ${runtime.urls.dynamodb} · data ${data}/`,
  );

  let stopping = false;
  const shutdown = (signal: string) => {
    // A terminal's Ctrl-C reaches npm, tsx and this process alike: only the first signal counts.
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: stopping (finishing requests and batches in flight)`);
    const force = setTimeout(() => {
      console.error('did not stop within 15 s; exiting');
      process.exit(1);
    }, 15_000);
    force.unref();
    runtime.stop().then(
      () => {
        console.log('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        console.error('error while stopping:', error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
} catch (error) {
  console.error('could not start the local runtime:', error instanceof Error ? error.message : error);
  if (error instanceof Error && error.stack) console.error(error.stack);
  process.exit(1);
}
