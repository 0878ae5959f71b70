import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { readCrmConfig } from '../../lib/config/crm.js';
import { signBody } from '../../tools/samples.js';
import { startTarget } from './support.js';

const TSX = join('node_modules', '.bin', 'tsx');
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** `npm run crm` with `env`, resolved with its ready line. */
async function serve(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; ready: string; output: () => string }> {
  const child = spawn(TSX, ['tools/crm/main.ts'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  );
  let output = '';
  const ready = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((candidate) => candidate.startsWith('crm simulator ready'));
      if (line) resolve(line);
    });
    child.once('exit', (code) => reject(new Error(`npm run crm exited ${code}: ${output}`)));
  });
  return { child, ready, output: () => output };
}

describe('npm run crm', () => {
  it('starts with one ready line, registers the receiver webhook, and a second process drives it', async () => {
    const target = await startTarget();
    cleanups.push(target.close);
    const dir = mkdtempSync(join(tmpdir(), 'crm-cli-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const env = {
      CRM_PORT: '0',
      CRM_DATA_DIR: dir,
      CRM_TARGET_URL: target.url,
      WEBHOOK_SECRET: 'cli-secret',
      WEBHOOK_SECRETS: '',
      STATE_EVENT_TOKEN: 'tok',
      ENV_FILE: join(dir, 'none.env'),
    };
    const served = await serve(env);
    const { ready } = served;
    expect(ready).toMatch(
      new RegExp(
        `^crm simulator ready: API http://127\\.0\\.0\\.1:\\d+/Cust12345/api/v1 \\(Basic crm:crm\\) · webhook 1 \\(Active\\) delivers to ${target.url.replaceAll('.', '\\.')}, its state events via webhook 2`,
      ),
    );
    const url = /API (http:\/\/127\.0\.0\.1:\d+)\//.exec(ready)![1]!;

    // The next lines: the receiver's two settings, ready to paste; as a shell reads them, the receiver's
    // reader accepts them, and they reach this simulator with its credentials.
    await expect.poll(() => served.output()).toMatch(/\n {2}CRM_API_URL='.*' npm start\n/);
    const paste = /\n {2}(CRM_API_URL=.*) npm start\n/.exec(served.output())![1]!;
    const { stdout: pasted } = await promisify(execFile)('sh', [
      '-c',
      `${paste} node -p 'JSON.stringify(process.env)'`,
    ]);
    const config = readCrmConfig(JSON.parse(pasted) as NodeJS.ProcessEnv);
    expect(config).toMatchObject({
      enabled: true,
      apiUrl: `${url}/{ContextIdentifier}/api/v1`,
      credentials: { '*': { type: 'basic', user: 'crm', password: 'crm' } },
    });
    const basic = (config as { credentials: Record<string, { user: string; password: string }> }).credentials[
      '*'
    ]!;
    const state = await fetch(`${url}/api/state/Cust12345`, {
      headers: {
        authorization: `Basic ${Buffer.from(`${basic.user}:${basic.password}`).toString('base64')}`,
      },
    });
    expect(state.status).toBe(200);
    const run = (...args: string[]) =>
      promisify(execFile)(TSX, ['tools/crm/main.ts', ...args], {
        env: { ...process.env, ...env, CRM_URL: url },
      });

    await run('create', 'contact', '42', 'name=Acme');
    const changed = await run('change', 'contact', '42', 'department=Sales');
    expect(JSON.parse(changed.stdout)).toMatchObject({
      event: 'contact.changed',
      webhooks: 1,
      row: { department: 'Sales' },
    });
    expect((await run('stop-webhook')).stdout).toBe('webhook 1 is Stopped\n');
    await expect(run('change', 'contact', '7', 'name=x')).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('answered 404: no contact 7'),
    });

    const [delivery] = target.of('contact.changed');
    expect(delivery?.headers['x-superoffice-signature']).toBe(signBody(delivery!.raw, 'cli-secret'));
    const [stopped] = target.of('webhook1.stopped');
    expect(stopped?.headers['x-receiver-token']).toBe('tok');
    expect(stopped?.body.WebhookName).toBe('crm-webhook-receiver-state');
  });
});
