import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGap } from '../support/gaps.js';
import { adminJson, type RuntimeProcess, spawnLocalRuntime } from '../support/local-runtime.js';
import { type SilentCrm, startSilentCrm } from '../support/silent-crm.js';

/**
 * `POST /reconcile` and what `npm start` says of reconciliation, through real runtimes: one with
 * CRM_API_URL and CRM_CREDENTIALS in its `.env` (ENV_FILE), pointed at a CRM that accepts connections and
 * never answers, so a request taken by the reconcile function stays in flight on the queue, visible; one
 * without.
 */
const SECRET = 'e2e-reconcile-secret';
const CREDENTIALS = JSON.stringify({ '*': { type: 'basic', user: 'u', password: 'never-printed-pw' } });
const dirs: string[] = [];
let silentCrm: SilentCrm;
let on: RuntimeProcess;
let off: RuntimeProcess;
let apiUrl: string;

beforeAll(async () => {
  silentCrm = await startSilentCrm();
  apiUrl = silentCrm.apiUrl;
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'crm-reconcile-e2e-'));
    dirs.push(dir);
    return dir;
  };
  const envFile = join(dataDir(), '.env');
  writeFileSync(envFile, `CRM_API_URL=${apiUrl}\nCRM_CREDENTIALS='${CREDENTIALS}'\nCRM_TIMEOUT_MS=600000\n`);
  [on, off] = await Promise.all([
    spawnLocalRuntime({
      dataDir: dataDir(),
      env: { WEBHOOK_SECRET: SECRET, ENV_FILE: envFile },
      readyTimeoutMs: 60_000,
    }),
    spawnLocalRuntime({ dataDir: dataDir(), env: { WEBHOOK_SECRET: SECRET }, readyTimeoutMs: 60_000 }),
  ]);
}, 90_000);

afterAll(async () => {
  await Promise.all([on?.stop(), off?.stop()]);
  await silentCrm?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}, 30_000);

const admin = <T = unknown>(runtime: RuntimeProcess, path: string, method = 'GET') =>
  adminJson<T>(runtime.adminUrl, path, { method });

const queued = async (runtime: RuntimeProcess) =>
  (await admin<Array<{ body: string }>>(runtime, '/queues/reconcile/messages')).body.map(
    (message) => JSON.parse(message.body) as Record<string, unknown>,
  );

describe('npm start with CRM_API_URL (in its .env)', () => {
  it('names the CRM API in its ready line, never the credentials', () => {
    expect(on.output()).toMatch(
      /^ready in \d+ ms: .* · gaps are reconciled from the CRM API http:\/\/127\.0\.0\.1:\d+\/\{ContextIdentifier\}\/api\/v1$/m,
    );
    expect(on.output()).not.toContain('never-printed-pw');
  });

  it('POST /reconcile queues the request on the reconcile queue, where the admin API shows it', async () => {
    const from = '2026-11-27T10:00:00Z';
    const answer = await admin<{ queued: Record<string, unknown> }>(
      on,
      `/reconcile?context=CustR&from=${from}&entities=contact,person`,
      'POST',
    );
    expect(answer.status).toBe(200);
    expect(answer.body.queued).toMatchObject({
      context: 'CustR',
      reason: 'manual',
      from,
      entities: ['contact', 'person'],
    });
    await expect.poll(() => queued(on), { timeout: 10_000 }).toEqual([answer.body.queued]);
  });

  it.each([
    ['/reconcile?from=2026-11-27T10:00:00Z', 'context: required'],
    ['/reconcile?context=CustR&from=yesterday', 'from: yesterday: an ISO 8601 time'],
    ['/reconcile?context=CustR&full=true&entities=contakt', 'entities: contakt cannot be reconciled'],
    [
      '/reconcile?context=CustR&full=true&entities=contact,quote',
      'entities: quote cannot be reconciled (its events carry no FieldValues',
    ],
    ['/reconcile?context=CustR&full=true&form=x', 'form: unknown'],
  ])('%s: 400 in one line naming the parameter, nothing queued', async (path, message) => {
    const before = (await queued(on)).length;
    const answer = await admin<{ error: string }>(on, path, 'POST');
    expect(answer.status).toBe(400);
    expect(answer.body.error.startsWith(message)).toBe(true);
    expect(answer.body.error).not.toContain('\n');
    expect(await queued(on)).toHaveLength(before);
  });

  it('GET /gaps says a gap can be recovered, and from where', async () => {
    await openGap(on, 'CustR', SECRET);
    await expect
      .poll(async () => (await admin<Array<Record<string, unknown>>>(on, '/gaps?context=CustR')).body, {
        timeout: 10_000,
      })
      .toEqual([
        expect.objectContaining({
          webhookId: 9,
          recoverable: true,
          recovery: expect.stringContaining(apiUrl),
        }),
      ]);
  });
});

describe('npm start without CRM_API_URL', () => {
  it('says in its ready line that gaps cannot be recovered, naming CRM_API_URL', () => {
    expect(off.output()).toMatch(
      /^ready in \d+ ms: .* · reconciliation is off: CRM_API_URL is not set, so gaps cannot be recovered/m,
    );
  });

  it('POST /reconcile: 409 naming CRM_API_URL, nothing queued; a bad parameter is still a 400', async () => {
    const answer = await admin<{ error: string }>(
      off,
      '/reconcile?context=CustR&from=2026-11-27T10:00:00Z',
      'POST',
    );
    expect(answer).toEqual({
      status: 409,
      body: {
        error: expect.stringMatching(
          /^reconciliation is off: CRM_API_URL is not set, so gaps cannot be recovered/,
        ),
      },
    });
    expect((await admin(off, '/reconcile?context=CustR', 'POST')).status).toBe(400);
    expect(await queued(off)).toEqual([]);
  });

  it('GET /gaps marks every gap as not recoverable, saying why', async () => {
    await openGap(off, 'CustOff', SECRET);
    await expect
      .poll(async () => (await admin<Array<Record<string, unknown>>>(off, '/gaps?context=CustOff')).body, {
        timeout: 10_000,
      })
      .toEqual([
        expect.objectContaining({
          webhookId: 9,
          recoverable: false,
          recovery: expect.stringContaining('CRM_API_URL is not set, so gaps cannot be recovered'),
        }),
      ]);
  });
});
