import { relative } from 'node:path';
import { ConfigError } from '../lib/config/env.js';
import { loadEnvFile, originOf } from './env-file.js';
import { readLocalConfig } from './local-config.js';
import { startLocalRuntime } from './runtime.js';
import { StartupError } from './startup-error.js';
import { markSecretShown } from './webhook-secret.js';

/**
 * `npm start`: the whole receiver on this machine. Configuration comes from the environment and an
 * optional `.env` file (ENV_FILE names another), the same variables as on AWS plus PORT, HOST,
 * ADMIN_PORT, DATA_DIR, SQS_PORT, DYNAMODB_PORT, EVENTBRIDGE_PORT, LOCAL_VISIBILITY_TIMEOUT,
 * LOCAL_MAX_CONNECTIONS, LOCAL_HEADERS_TIMEOUT_MS and LOCAL_BUS_BACKOFF_MS.
 * A mistake the user can fix (a value, a busy port, a DATA_DIR in use) is one line and exit status 2.
 */
const envFile = loadEnvFile(process.env.ENV_FILE ?? '.env');
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** A path relative to the working directory when it is below it, else absolute. */
const display = (path: string): string => {
  const relativePath = relative(process.cwd(), path);
  return relativePath === '' ? '.' : relativePath.startsWith('..') ? path : relativePath;
};

/** One line for a mistake the user can fix, exit 2; anything else with its stack, exit 1. */
const fail = (error: unknown): never => {
  if (error instanceof StartupError) console.error(error.message);
  else if (error instanceof ConfigError)
    console.error(`${error.message} (${originOf(error.variable, envFile)})`);
  else {
    console.error('could not start the local runtime:', error instanceof Error ? error.message : error);
    if (error instanceof Error && error.stack) console.error(error.stack);
    process.exit(1);
  }
  process.exit(2);
};

try {
  const runtime = await startLocalRuntime(readLocalConfig(process.env, (name) => originOf(name, envFile)));
  const data = display(runtime.dataDir);
  if (envFile) console.log(`loaded ${envFile.path}`);
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
    markSecretShown(runtime.secret.path!);
  } else if (runtime.secret.source === 'data-dir') {
    console.log(`using the webhook secret generated earlier (${display(runtime.secret.path!)})`);
  } else if (runtime.secret.source === 'unsigned') {
    console.log('ALLOW_UNSIGNED=true: contexts without a secret accept unsigned deliveries');
  }
  console.log(
    `ready in ${Math.round(process.uptime() * 1000)} ms: POST ${runtime.urls.webhook} · admin ${runtime.urls.admin} · ` +
      `dashboard ${runtime.urls.dashboard} · ` +
      `sqs ${runtime.urls.sqs} · dynamodb ${runtime.urls.dynamodb} · eventbridge ${runtime.urls.eventbridge} · ` +
      `${runtime.subscriptions} subscription${runtime.subscriptions === 1 ? '' : 's'} · data ${data}/ · ` +
      runtime.reconciliation.note,
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
  fail(error);
}
