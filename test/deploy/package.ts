import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const ROOT = join(import.meta.dirname, '..', '..');
export const STAGE = 'dev';
export const REGION = 'eu-west-1';
export const FUNCTIONS = ['ingest', 'contactWorker', 'activityWorker', 'webhookStateWorker'] as const;
export type FunctionKey = (typeof FUNCTIONS)[number];

/** The entry file of each function, as serverless.yml names it. */
export const ENTRIES: Record<FunctionKey, string> = {
  ingest: 'functions/ingest',
  contactWorker: 'functions/contact-worker',
  activityWorker: 'functions/activity-worker',
  webhookStateWorker: 'functions/webhook-state-worker',
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
}

/**
 * Runs `osls package` offline (fake credentials, no AWS call) with stage parameters `params` into
 * `dir`, and returns the generated template and the provider settings it recorded. Slow (bundles four functions) and not safe to run
 * twice at once (the bundles share .esbuild/): call it in a beforeAll, one run after the other.
 */
export async function packageStack(
  params: Record<string, string> = {},
  dir = '.serverless',
): Promise<Packaged> {
  await promisify(execFile)(
    join(ROOT, 'node_modules', '.bin', 'osls'),
    [
      'package',
      '--stage',
      STAGE,
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
      },
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  const read = async (file: string): Promise<unknown> =>
    JSON.parse(await readFile(join(ROOT, dir, file), 'utf8'));
  const state = (await read('serverless-state.json')) as { service: { provider: PackagedProvider } };
  return {
    template: (await read('cloudformation-template-update-stack.json')) as Template,
    provider: state.service.provider,
  };
}

/** Size in bytes of a function's minified bundle as packaged (serverless-esbuild keeps its output folder). */
/** The packaged bundle of a function (kept by serverless-esbuild after `osls package`). */
export function bundlePath(key: FunctionKey): string {
  return join(ROOT, '.esbuild', '.build', `${ENTRIES[key]}.mjs`);
}

export async function bundleSize(key: FunctionKey): Promise<number> {
  return (await stat(bundlePath(key))).size;
}

export async function bundleCode(key: FunctionKey): Promise<string> {
  return readFile(bundlePath(key), 'utf8');
}
