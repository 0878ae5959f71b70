import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../deploy/package.js';
import { freePort, type RuntimeProcess, spawnLocalRuntime } from '../support/local-runtime.js';

/*
 * The README's commands that write into the checkout (`npm start`, `npm run crm`, `npm run simulate`,
 * `npm run package`), each run briefly in a copy of this checkout with its default directories, as a user
 * runs them; then `npx biome check .` (what `npm run lint` runs) must still pass there. The copy is the
 * files git would commit, node_modules linked: a user's own `.data/` or running receiver is never touched.
 */

const run = promisify(execFile);
let copy: string;
let runtime: RuntimeProcess | undefined;

beforeAll(async () => {
  copy = await mkdtemp(join(tmpdir(), 'checkout-'));
  const { stdout } = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  for (const file of stdout.split('\0').filter((f) => f !== '' && existsSync(join(ROOT, f))))
    await cp(join(ROOT, file), join(copy, file));
  await symlink(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
}, 60_000);

afterAll(async () => {
  await runtime?.stop();
  if (copy) await rm(copy, { recursive: true, force: true });
});

/** `npm run <script> -- args` in the copy, with `env` added; its exit code and output. */
async function npmRun(script: string, args: string[], env: Record<string, string> = {}) {
  return run('npm', ['run', '--silent', script, '--', ...args], {
    cwd: copy,
    env: { ...process.env, ...env },
    maxBuffer: 16 * 1024 * 1024,
  });
}

/** Starts `npm run crm` in the copy and resolves with it once it printed its ready line. */
async function startCrm(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn('npm', ['run', '--silent', 'crm'], {
    cwd: copy,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm run crm was not ready:\n${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (output.includes('crm simulator ready')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`npm run crm exited with ${code}:\n${output}`)));
  });
  return child;
}

describe('the README commands leave `npm run lint` green', () => {
  it('start, crm, simulate and package write only what Biome ignores', async () => {
    runtime = await spawnLocalRuntime({ dataDir: undefined, cwd: copy });
    const ports = { PORT: String(runtime.port), ADMIN_PORT: String(runtime.adminPort) };

    const crm = await startCrm({ ...ports, CRM_PORT: String(await freePort()) });
    const crmExit = new Promise((resolve) => crm.once('exit', resolve));
    process.kill(-crm.pid!, 'SIGINT');
    await crmExit;

    const simulated = await npmRun('simulate', ['--events', '20', '--rows', '5'], ports);
    expect(simulated.stdout).toMatch(/mismatches\D*0/);
    await runtime.stop();
    runtime = undefined;

    await npmRun('package', []);

    for (const written of ['.data', '.crm-data', '.serverless', '.esbuild'])
      expect(existsSync(join(copy, written)), written).toBe(true);
    const lint = await run(join(ROOT, 'node_modules', '.bin', 'biome'), ['check', '.'], { cwd: copy }).then(
      () => 0,
      (error: { code?: number; stdout?: string; stderr?: string }) => {
        console.error(error.stdout, error.stderr);
        return error.code;
      },
    );
    expect(lint).toBe(0);
  }, 120_000);
});
