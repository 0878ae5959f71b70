import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RunningCrm, startCrm } from '../../tools/crm/start.js';
import { httpRequest } from '../../tools/http-client.js';
import { startTarget } from './support.js';

let crm: RunningCrm;
let dir: string;
let target: Awaited<ReturnType<typeof startTarget>>;
let answer = 200;
const BASIC = { authorization: `Basic ${Buffer.from('crm:crm').toString('base64')}` };

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'crm-admin-'));
  crm = await startCrm({ dataDir: dir, delivery: { retryDelaysMs: [1, 1] } });
  answer = 200;
  target = await startTarget(() => answer);
});
afterEach(async () => {
  await target.close();
  await crm.stop();
  rmSync(dir, { recursive: true, force: true });
});

const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const response = await httpRequest(
    method,
    `${crm.url}${path}`,
    { ...BASIC, 'content-type': 'application/json', ...headers },
    body === undefined ? undefined : JSON.stringify(body),
  );
  return {
    status: response.status,
    body: response.body ? (JSON.parse(response.body) as Record<string, unknown>) : {},
  };
};
const signature = (secret: string, raw: string) => createHmac('sha256', secret).update(raw).digest('base64');
const create = () =>
  call('POST', '/Cust1/api/v1/Webhook', {
    Name: 'receiver',
    Events: ['contact.created'],
    TargetUrl: target.url,
    Secret: 'first-secret',
    ErrorsEmail: 'ops@example.com',
  });

describe('the simulator webhook API', () => {
  it('changes the Secret by merge patch: the test delivery and every later one are signed with the new secret', async () => {
    expect((await create()).status).toBe(201);
    const patched = await call('PATCH', '/Cust1/api/v1/Webhook/1', { Secret: 'second-secret' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ Secret: null, ErrorsEmail: 'ops@example.com', State: 'Active' });
    const test = target.of('test').at(-1)!;
    expect(test.headers['x-superoffice-signature']).toBe(signature('second-secret', test.raw));
    crm.core.change('Cust1', { op: 'create', table: 'contact', fields: { name: 'A' } } as never);
    await crm.core.dispatcher.idle();
    const delivered = target.of('contact.created')[0]!;
    expect(delivered.headers['x-superoffice-signature']).toBe(signature('second-secret', delivered.raw));
  });

  it('keeps the old secret when the target refuses the test delivery of a change', async () => {
    await create();
    answer = 401;
    const refused = await call('PATCH', '/Cust1/api/v1/Webhook/1', { Secret: 'second-secret' });
    expect(refused.status).toBe(400);
    expect(String(refused.body.Error)).toMatch(/answered the test delivery with 401/);
    expect(crm.core.webhook('Cust1', 1).secret).toBe('first-secret');
  });

  it('changes Events by JSON Patch, answers 409 when a test operation fails (paths in any case) and 412 when changed since If-Unmodified-Since', async () => {
    await create();
    // Paths in any case, the leading slash optional, as the CRM's docs say.
    const replaced = await call('PATCH', '/Cust1/api/v1/Webhook/1', [
      { op: 'test', path: 'events', value: ['contact.created'] },
      { op: 'replace', path: '/EVENTS', value: ['contact.created', 'contact.changed'] },
    ]);
    expect(replaced.body.Events).toEqual(['contact.created', 'contact.changed']);
    const conflict = await call('PATCH', '/Cust1/api/v1/Webhook/1', [
      { op: 'test', path: '/Events', value: ['contact.created'] },
      { op: 'replace', path: '/Events', value: ['contact.deleted'] },
    ]);
    expect(conflict.status).toBe(409);
    const stale = await call(
      'PATCH',
      '/Cust1/api/v1/Webhook/1',
      { Events: ['contact.deleted'] },
      { 'if-unmodified-since': new Date(Date.now() - 60_000).toUTCString() },
    );
    expect(stale.status).toBe(412);
    expect(crm.core.webhook('Cust1', 1).events).toEqual(['contact.created', 'contact.changed']);
  });

  it('deletes a webhook for good: 204, then 404', async () => {
    await create();
    expect((await call('DELETE', '/Cust1/api/v1/Webhook/1')).status).toBe(204);
    expect((await call('GET', '/Cust1/api/v1/Webhook/1')).status).toBe(404);
    expect((await call('GET', '/Cust1/api/v1/Webhook')).body).toEqual([]);
  });
});

describe('the simulator tenant states', () => {
  const state = async () => (await call('GET', '/api/state/Cust1')).body;
  const setTenant = (body: Record<string, unknown>) => call('PUT', '/sim/Cust1/tenant', body);

  it('answers 503 with Retry-After while Suspended, 404 once Deleted, and says so at /api/state', async () => {
    await setTenant({ state: 'Suspended' });
    expect(await state()).toMatchObject({ State: 'Suspended', IsRunning: false });
    const suspended = await httpRequest('GET', `${crm.url}/Cust1/api/v1/Webhook`, BASIC);
    expect([suspended.status, suspended.headers['retry-after']]).toEqual([503, '60']);
    await setTenant({ state: 'Deleted' });
    expect((await call('GET', '/Cust1/api/v1/Webhook')).status).toBe(404);
    await setTenant({ state: 'Running' });
    expect((await call('GET', '/Cust1/api/v1/Webhook')).status).toBe(200);
  });

  it('moves a tenant: a new Endpoint, 421 at the old address, served at the new one', async () => {
    await setTenant({ move: true });
    const moved = await state();
    expect(moved).toMatchObject({
      State: 'Running',
      Endpoint: `${crm.url}/h2/Cust1`,
      Api: `${crm.url}/h2/Cust1/api`,
    });
    expect((await call('GET', '/Cust1/api/v1/Webhook')).status).toBe(421);
    expect((await call('GET', '/h2/Cust1/api/v1/Webhook')).status).toBe(200);
  });
});
