import type { ServerResponse } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CrmApiError, CrmRetryLater } from '../../lib/crm/index.js';
import type { RunningCrm } from '../../tools/crm/start.js';
import { until } from '../crm/support.js';
import { startServer } from '../support/http-server.js';
import { clientOf, recordingFetch, simulator } from './support.js';

let crm: RunningCrm;
let stop: () => Promise<void>;
const cleanups: Array<() => Promise<void>> = [];
const noJitter = () => 0;

beforeEach(async () => {
  ({ crm, stop } = await simulator());
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await stop();
});

async function server(handle: Parameters<typeof startServer>[0]) {
  const started = await startServer(handle);
  cleanups.push(started.close);
  return { ...started, apiUrl: `${started.url}/{ContextIdentifier}/api/v1` };
}

describe('a tenant that throttles, is down or in maintenance', () => {
  it('waits as 429 Retry-After says and then gets every answer', async () => {
    crm.faults.set({ rateLimitPerSecond: 2 });
    const { fetch, calls } = recordingFetch();
    const client = clientOf(crm, { fetch, random: noJitter, limits: { perSecond: 100, maxAttempts: 3 } });
    expect(await Promise.all([1, 2, 3, 4].map(() => client.listWebhooks('Cust1')))).toEqual([[], [], [], []]);
    expect(calls.filter((call) => call.status === 429).length).toBeGreaterThan(0);
    expect(calls.filter((call) => call.status === 200)).toHaveLength(4);
  });

  it('keeps under the calls per second it is given, so a tenant limit is never reached', async () => {
    crm.faults.set({ rateLimitPerSecond: 3 });
    const { fetch, calls } = recordingFetch();
    const client = clientOf(crm, { fetch, limits: { perSecond: 2 } });
    await Promise.all([1, 2, 3, 4, 5].map(() => client.listWebhooks('Cust1')));
    expect(calls.map((call) => call.status)).toEqual([200, 200, 200, 200, 200]);
  });

  it('keeps at most inFlight calls open per tenant', async () => {
    const open: ServerResponse[] = [];
    let most = 0;
    const held = await server((_req, res) => {
      open.push(res);
      most = Math.max(most, open.length);
    });
    const client = clientOf(crm, { apiUrl: held.apiUrl, limits: { inFlight: 2 } });
    const all = Promise.all([1, 2, 3, 4, 5].map(() => client.listWebhooks('Cust1')));
    for (let answered = 0; answered < 5; answered++) {
      await until(() => open.length > 0 && (open.length === 2 || answered >= 4));
      for (let turn = 0; turn < 50; turn++) await new Promise((resolve) => setImmediate(resolve));
      open.shift()!.writeHead(200, { 'content-type': 'application/json' }).end('[]');
    }
    expect(await all).toHaveLength(5);
    expect(most).toBe(2);
  });

  it('sits out a 503 phase as Retry-After says, or stops with CrmRetryLater when its time budget is shorter', async () => {
    crm.faults.set({ unavailableUntil: Date.now() + 1000 });
    const { fetch, calls } = recordingFetch();
    const short = clientOf(crm, { fetch, random: noJitter, timeLeftMs: () => 900 });
    const later = await short.listWebhooks('Cust1').catch((error: unknown) => error);
    expect(later).toBeInstanceOf(CrmRetryLater);
    expect(later).toMatchObject({ reason: 'unavailable', retryAfterMs: 1000, status: 503 });
    expect((later as Error).message).toBe(
      'GET /Cust1/api/v1/Webhook: HTTP 503 after 1 attempt, retry in 1 s',
    );

    expect(await clientOf(crm, { fetch, random: noJitter }).listWebhooks('Cust1')).toEqual([]);
    expect(calls.map((call) => call.status)).toEqual([503, 503, 200]);

    crm.faults.set({ unavailableUntil: Date.now() + 30_000 });
    const once = clientOf(crm, { limits: { maxAttempts: 1 }, random: noJitter });
    await expect(once.listWebhooks('Cust1')).rejects.toMatchObject({
      reason: 'unavailable',
      retryAfterMs: 30_000,
    });
  });

  it('starts no call once the time budget is spent', async () => {
    const { fetch, calls } = recordingFetch();
    const spent = await clientOf(crm, { fetch, timeLeftMs: () => 0 })
      .listWebhooks('Cust1')
      .catch((error: unknown) => error);
    expect(spent).toMatchObject({ name: 'CrmRetryLater', reason: 'budget' });
    expect(calls).toEqual([]);
  });

  it('says a tenant in maintenance is not running (retry later), and a running one is', async () => {
    expect(await clientOf(crm).tenantState('Cust1')).toEqual({
      running: true,
      state: 'Running',
      endpoint: `${crm.url}/Cust1/api`,
    });
    const maintenance = await server((req, res) => {
      const body = { ContextIdentifier: 'Cust1', State: 'OfflineMaintenance', IsRunning: false };
      res.writeHead(req.url === '/api/state/Cust1' ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
    expect(await clientOf(crm, { apiUrl: maintenance.apiUrl }).tenantState('Cust1')).toEqual({
      running: false,
      state: 'OfflineMaintenance',
      retryAfterMs: 60_000,
    });
  });
});

describe('a peer that never answers, answers forever or too much', () => {
  it('gives up on a socket that never answers after the timeout of each attempt, in one line', async () => {
    const silent = await server(() => undefined);
    const client = clientOf(crm, {
      apiUrl: silent.apiUrl,
      limits: { timeoutMs: 200, maxAttempts: 2 },
      random: noJitter,
    });
    const error = await client.listWebhooks('Cust1').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CrmApiError);
    expect((error as Error).message).toBe('GET /Cust1/api/v1/Webhook: no answer within 200 ms (2 attempts)');
  });

  it('stops reading an answer that never ends, and one over the size allowed', async () => {
    const trickling = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[');
      const timer = setInterval(() => res.write(' '), 20);
      res.on('close', () => clearInterval(timer));
    });
    const forever = clientOf(crm, { apiUrl: trickling.apiUrl, limits: { timeoutMs: 300, maxAttempts: 1 } });
    await expect(forever.listWebhooks('Cust1')).rejects.toThrow(
      'GET /Cust1/api/v1/Webhook: no answer within 300 ms (1 attempt)',
    );

    const huge = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`[${'"x",'.repeat(1000)}"x"]`);
    });
    const bounded = clientOf(crm, { apiUrl: huge.apiUrl, limits: { maxBodyBytes: 1024, maxAttempts: 1 } });
    await expect(bounded.listWebhooks('Cust1')).rejects.toThrow(
      'GET /Cust1/api/v1/Webhook: the answer is over 1024 bytes (1 attempt)',
    );
  });
});
