import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSampleBody } from '../../tools/samples.js';
import {
  postDelivery,
  type RuntimeProcess,
  spawnLocalRuntime,
  failedStart as startToFail,
} from '../support/local-runtime.js';

/** What a new user meets when something is wrong: one line, exit 2, no stack trace. */
let dataDir: string;
let blocker: Server;
let busyPort: number;
let runtime: RuntimeProcess | undefined;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'crm-local-start-'));
  blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  busyPort = (blocker.address() as { port: number }).port;
});

afterAll(async () => {
  await runtime?.stop();
  blocker.close();
  rmSync(dataDir, { recursive: true, force: true });
}, 30_000);

/** `npm start` expected to fail on this test's DATA_DIR, without a configured secret. */
const failedStart = (env: Record<string, string>) =>
  startToFail({ dataDir, env: { WEBHOOK_SECRET: '', ...env } });

describe('npm start, when something is wrong', () => {
  it('names a configuration mistake, where it came from and what is accepted, in one line', async () => {
    const envFile = join(dataDir, 'test.env');
    writeFileSync(envFile, 'LOCAL_VISIBILITY_TIMEOUT=-5\n');
    expect(await failedStart({ ENV_FILE: envFile })).toEqual({
      code: 2,
      lines: [
        `LOCAL_VISIBILITY_TIMEOUT="-5" in ${envFile} is not accepted: whole seconds from 0 to 43200 (the SQS limit)`,
      ],
    });
    expect(await failedStart({ LOCAL_VISIBILITY_TIMEOUT: '50000' })).toMatchObject({
      code: 2,
      lines: [expect.stringMatching(/^LOCAL_VISIBILITY_TIMEOUT="50000" in the environment is not accepted/)],
    });
  }, 30_000);

  it('names a busy port and its variable in one line, and shows the secret it generated on the next start that succeeds', async () => {
    expect(await failedStart({ PORT: String(busyPort) })).toEqual({
      code: 2,
      lines: [`port ${busyPort} is in use by another process: set PORT to a free port (0 picks one)`],
    });
    const secret = readFileSync(join(dataDir, 'webhook-secret'), 'utf8').trim();

    runtime = await spawnLocalRuntime({ dataDir, env: { WEBHOOK_SECRET: '' } });
    expect(runtime.output()).toContain(`WEBHOOK_SECRET=${secret}`);
  }, 60_000);

  it('refuses a second start on the same DATA_DIR, naming the pid and ports of the one that holds it', async () => {
    const second = await failedStart({});
    expect(second.code).toBe(2);
    expect(second.lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `^another receiver \\(pid \\d+, ingest port ${runtime!.port}, admin port ${runtime!.adminPort}\\) holds DATA_DIR `,
        ),
      ),
    ]);
  }, 30_000);

  it('names a function setting it refuses, and the value, before it looks at DATA_DIR (held here by another start)', async () => {
    expect(await failedStart({ ENTITIES: 'contact,foo' })).toEqual({
      code: 2,
      lines: [
        expect.stringMatching(
          /^ENTITIES: "foo" is not an entity; ENTITIES must be .* \(in the environment\)$/,
        ),
      ],
    });
  }, 30_000);

  it('names a reconciliation setting it refuses in one line, never the credentials', async () => {
    expect(
      await failedStart({
        CRM_API_URL: 'http://crm.example/{ContextIdentifier}/api/v1',
        CRM_CREDENTIALS: '{}',
      }),
    ).toEqual({
      code: 2,
      lines: [expect.stringMatching(/^CRM_API_URL must be the CRM's API base .* \(in the environment\)$/)],
    });
    // No SSM locally: the credentials' parameter is refused, naming what to set instead.
    expect(
      await failedStart({
        CRM_API_URL: 'http://127.0.0.1:3100/{ContextIdentifier}/api/v1',
        CRM_CREDENTIALS_PARAMETER: '/crm-webhook-receiver/dev/crm-credentials',
      }),
    ).toEqual({
      code: 2,
      lines: [
        'CRM_CREDENTIALS_PARAMETER is read from SSM on AWS only: locally, put the same JSON in CRM_CREDENTIALS (in the environment)',
      ],
    });
  }, 30_000);

  it('says on stop which messages stay queued because they are parked', async () => {
    const secret = readFileSync(join(dataDir, 'webhook-secret'), 'utf8').trim();
    const body = { ...buildSampleBody('contact.changed'), Event: 'invoice.created', Entity: 'invoice' };
    const answer = await postDelivery(runtime!.webhookUrl, body, secret);
    expect(answer.status).toBe(200);
    await runtime!.stop();
    expect(runtime!.output()).toMatch(
      /1 message stays queued: 0 pending, processed on the next start; 1 parked \(never drain/,
    );
    runtime = undefined;
  }, 30_000);

  it('kills the whole start the harness waited for in vain: no process of it is left holding its DATA_DIR', async () => {
    const dir = join(dataDir, 'never-ready');
    /** The processes whose environment names `dir` as DATA_DIR (npm, tsx, the runtime); zombies have none. */
    const holders = () =>
      readdirSync('/proc')
        .filter((name) => /^\d+$/.test(name))
        .filter((pid) => {
          try {
            return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`DATA_DIR=${dir}`);
          } catch {
            return false;
          }
        });
    try {
      await expect(
        spawnLocalRuntime({ dataDir: dir, readyTimeoutMs: 200, env: { WEBHOOK_SECRET: 'x' } }),
      ).rejects.toThrow(/^npm start was not ready within 200 ms/);
      expect(holders()).toEqual([]);
    } finally {
      for (const pid of holders()) process.kill(Number(pid), 'SIGKILL');
    }
  }, 30_000);
});
