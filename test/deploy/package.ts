import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

export const ROOT = join(import.meta.dirname, '..', '..');
export const STAGE = 'dev';
export const REGION = 'eu-west-1';
export const FUNCTIONS = [
  'ingest',
  'contactWorker',
  'activityWorker',
  'entitiesWorker',
  'webhookStateWorker',
  'reconcile',
  'reconcilePoll',
  'retireSecrets',
] as const;
export type FunctionKey = (typeof FUNCTIONS)[number];

/** The entry file of each function, as serverless.yml names it. */
export const ENTRIES: Record<FunctionKey, string> = {
  ingest: 'functions/ingest',
  contactWorker: 'functions/contact-worker',
  activityWorker: 'functions/activity-worker',
  entitiesWorker: 'functions/entities-worker',
  webhookStateWorker: 'functions/webhook-state-worker',
  reconcile: 'functions/reconcile',
  reconcilePoll: 'functions/reconcile-poll',
  retireSecrets: 'functions/retire-secrets',
};

export interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
  Condition?: string;
  DependsOn?: unknown;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}

export interface Template {
  Resources: Record<string, Resource>;
  Conditions?: Record<string, unknown>;
  Outputs: Record<string, { Value: unknown; Description?: string }>;
}

/** The provider settings osls recorded in serverless-state.json that `deploy` applies outside the template. */
export interface PackagedProvider {
  /** Sent with every artefact upload (PutObject), e.g. `serverSideEncryption`. */
  deploymentBucketObject?: Record<string, unknown>;
}

export interface Packaged {
  template: Template;
  provider: PackagedProvider;
  /** serverless.yml's `custom`, resolved. */
  custom: Record<string, unknown>;
  plugins: string[];
}

/**
 * Runs `osls package` offline (fake credentials, no AWS call but an `${ssm:…}` lookup, which `env` can
 * point at a fake SSM with AWS_ENDPOINT_URL_SSM) for `stage` with stage parameters `params` into `dir`
 * (relative to the repository, or absolute), with `env` added to the environment, and returns the
 * generated template and the settings it recorded. Slow (bundles five functions): call it in a
 * beforeAll. Runs from several test files wait for each other (the bundles share .esbuild/).
 */
export async function packageStack(
  params: Record<string, string> = {},
  dir = '.serverless',
  env: Record<string, string> = {},
  stage = STAGE,
): Promise<Packaged> {
  await withPackagingLock(() => runPackage(params, dir, env, stage));
  const read = async (file: string): Promise<unknown> =>
    JSON.parse(await readFile(resolve(ROOT, dir, file), 'utf8'));
  const { service } = (await read('serverless-state.json')) as {
    service: { provider: PackagedProvider; custom: Record<string, unknown>; plugins: string[] };
  };
  return {
    template: (await read('cloudformation-template-update-stack.json')) as Template,
    provider: service.provider,
    custom: service.custom,
    plugins: service.plugins,
  };
}

async function runPackage(
  params: Record<string, string>,
  dir: string,
  env: Record<string, string>,
  stage: string,
) {
  await promisify(execFile)(
    join(ROOT, 'node_modules', '.bin', 'osls'),
    [
      'package',
      '--stage',
      stage,
      '--region',
      REGION,
      '--package',
      dir,
      ...Object.entries(params).map(([name, value]) => `--param=${name}=${value}`),
    ],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE',
        AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
        AWS_REGION: REGION,
        SLS_TELEMETRY_DISABLED: '1',
        SLS_NOTIFICATIONS_MODE: 'off',
        ...env,
      },
      maxBuffer: 16 * 1024 * 1024,
    },
  );
}

/** A lock directory per checkout (mkdir is atomic); one left by a killed run is taken after 10 minutes. */
async function withPackagingLock<T>(run: () => Promise<T>): Promise<T> {
  const hash = createHash('sha256').update(ROOT).digest('hex').slice(0, 12);
  const lock = join(tmpdir(), `crm-webhook-receiver-package-${hash}.lock`);
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const age = Date.now() - (await stat(lock).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs;
      if (age > 600_000) await rm(lock, { recursive: true, force: true });
      else await sleep(500);
    }
  }
  try {
    return await run();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

/** Size in bytes of a function's minified bundle as packaged (serverless-esbuild keeps its output folder). */
/** The packaged bundle of a function (kept by serverless-esbuild after `osls package`). */
export function bundlePath(key: FunctionKey): string {
  return join(ROOT, '.esbuild', '.build', `${ENTRIES[key]}.mjs`);
}

/** The zip of a function as last packaged (serverless-esbuild zips in .esbuild/.serverless, then osls moves a copy). */
export function zipPath(key: FunctionKey): string {
  return join(ROOT, '.esbuild', '.serverless', `${key}.zip`);
}

export async function bundleSize(key: FunctionKey): Promise<number> {
  return (await stat(bundlePath(key))).size;
}

export async function bundleCode(key: FunctionKey): Promise<string> {
  return readFile(bundlePath(key), 'utf8');
}
