import { createPublicKey, createVerify } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { signSystemToken } from '../../tools/crm/auth.js';
import { type RunningCrm, startCrm } from '../../tools/crm/start.js';
import { httpRequest } from '../../tools/http-client.js';
import { startTarget } from './support.js';

let crm: RunningCrm;
let dir: string;
const BASIC = { authorization: `Basic ${Buffer.from('crm:crm').toString('base64')}` };
const cleanups: Array<() => unknown> = [];

beforeEach(async () => {
  vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-11-27T12:00:00Z') });
  dir = mkdtempSync(join(tmpdir(), 'crm-rest-'));
  crm = await startCrm({ dataDir: dir, delivery: { retryDelaysMs: [1, 1] } });
});
afterEach(async () => {
  vi.useRealTimers();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await crm.stop();
  rmSync(dir, { recursive: true, force: true });
});

const get = (path: string, headers: Record<string, string> = BASIC) =>
  httpRequest('GET', `${crm.url}${path}`, headers);
const json = (answer: { body: string }) => JSON.parse(answer.body) as Record<string, unknown>;
const change = (body: Record<string, unknown>) => crm.core.change('Cust1', body as never);

describe('the CRM simulator REST API', () => {
  it('answers 501 naming the path for what it does not serve, and 401 without credentials', async () => {
    const quote = await get('/Cust1/api/v1/Quote/1');
    expect(quote.status).toBe(501);
    expect(json(quote).Error).toBe('GET /Cust1/api/v1/Quote/1 is not implemented by the CRM simulator');
    const anonymous = await get('/Cust1/api/v1/Contact/1', {});
    expect(anonymous.status).toBe(401);
    expect((await get('/Cust1/api/v1/Contact/1', { authorization: 'Basic bm86bm8=' })).status).toBe(401);
  });

  it('refuses a foreign Host or Origin, like the admin API', async () => {
    expect((await get('/api/state/Cust1', { origin: 'http://evil.example' })).status).toBe(403);
    expect((await get('/api/state/Cust1', { host: 'rebound.example' })).status).toBe(403);
  });

  it('says where the tenant is and that it runs', async () => {
    const answer = json(await get('/api/state/Cust1', {}));
    expect(answer).toMatchObject({
      ContextIdentifier: 'Cust1',
      State: 'Running',
      IsRunning: true,
      Endpoint: `${crm.url}/Cust1`,
    });
  });

  it('runs the system user flow: signed token → JWT with a ticket → SOTicket + SO-AppToken, 401 once it expired', async () => {
    const signed = signSystemToken(crm.auth.systemUserToken, crm.auth.appPrivateKey!);
    const login = await httpRequest(
      'POST',
      `${crm.url}/Login/api/PartnerSystemUser/Authenticate`,
      { 'content-type': 'application/json' },
      JSON.stringify({
        SignedSystemToken: signed,
        ApplicationToken: 'sim-app-token',
        ContextIdentifier: 'Cust1',
        ReturnTokenType: 'JWT',
      }),
    );
    const { IsSuccessful, Token } = json(login) as { IsSuccessful: boolean; Token: string };
    expect(IsSuccessful).toBe(true);
    const [header, payload, signature] = Token.split('.') as [string, string, string];
    expect(
      createVerify('RSA-SHA256')
        .update(`${header}.${payload}`)
        .verify(createPublicKey(crm.auth.issuerPublicKey), signature, 'base64url'),
    ).toBe(true);
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, string>;
    const ticket = claims['http://schemes.superoffice.net/identity/ticket']!;
    expect(claims['http://schemes.superoffice.net/identity/webapi_url']).toBe(`${crm.url}/Cust1/api`);

    const headers = { authorization: `SOTicket ${ticket}`, 'so-apptoken': 'sim-app-token' };
    expect((await get('/Cust1/api/v1/Webhook', headers)).status).toBe(200);
    expect((await get('/Cust1/api/v1/Webhook', { authorization: `SOTicket ${ticket}` })).status).toBe(401);
    expect((await get('/Other/api/v1/Webhook', headers)).status).toBe(401);
    vi.setSystemTime(Date.now() + 6 * 3600_000 - 1);
    expect((await get('/Cust1/api/v1/Webhook', headers)).status).toBe(200);
    vi.setSystemTime(Date.now() + 6 * 3600_000);
    const expired = await get('/Cust1/api/v1/Webhook', headers);
    expect(expired.status).toBe(401);
    expect(json(expired).Error).toMatch(/expired/);

    const forged = signSystemToken('another-token', crm.auth.appPrivateKey!);
    const refused = await httpRequest(
      'POST',
      `${crm.url}/Login/api/PartnerSystemUser/Authenticate`,
      {},
      JSON.stringify({
        SignedSystemToken: forged,
        ApplicationToken: 'sim-app-token',
        ContextIdentifier: 'Cust1',
      }),
    );
    expect(json(refused)).toMatchObject({ IsSuccessful: false, Token: null });
  });

  it('serves one row by id: PascalCase, 304 while unchanged since If-Modified-Since, 404 once deleted', async () => {
    change({ op: 'create', table: 'contact', id: 42, fields: { name: 'Acme' } });
    const first = await get('/Cust1/api/v1/Contact/42');
    expect(first.status).toBe(200);
    expect(json(first)).toMatchObject({
      ContactId: 42,
      Name: 'Acme',
      Department: '',
      UpdatedDate: '0001-01-01T00:00:00',
    });
    const since = String(first.headers['last-modified']);
    expect((await get('/Cust1/api/v1/Contact/42', { ...BASIC, 'if-modified-since': since })).status).toBe(
      304,
    );

    vi.setSystemTime(Date.now() + 2000);
    change({ op: 'change', table: 'contact', id: 42, fields: { department: 'Sales' } });
    const changed = await get('/Cust1/api/v1/Contact/42', { ...BASIC, 'if-modified-since': since });
    expect(changed.status).toBe(200);
    expect(json(changed).Department).toBe('Sales');

    change({ op: 'delete', table: 'contact', id: 42 });
    expect((await get('/Cust1/api/v1/Contact/42')).status).toBe(404);
  });

  it('lists the rows changed in a window through the dynamic provider, page by page with odata.nextLink', async () => {
    for (const id of [1, 2, 3, 4, 5])
      change({ op: 'create', table: 'contact', id, fields: { name: `C${id}` } });
    vi.setSystemTime(new Date('2026-11-27T12:10:00Z'));
    for (const id of [5, 2, 4]) {
      vi.setSystemTime(Date.now() + 1000);
      change({ op: 'change', table: 'contact', id, fields: { department: `D${id}` } });
    }
    const query = new URLSearchParams({
      $select: 'contact.contact_id,contact.name,contact.department,contact.updated',
      $filter:
        "contact.updated afterTime '2026-11-27T12:05:00' and (contact.name eq 'C2' or contact.name eq 'C5' or contact.name eq 'C4')",
      $orderBy: 'contact.updated',
      $top: '2',
    });
    const rows: Array<Record<string, unknown>> = [];
    let next: string | undefined = `/Cust1/api/v1/archive/dynamic?${query}`;
    let pages = 0;
    while (next) {
      const answer = await get(next);
      const page = json(answer);
      rows.push(...(page.value as Array<Record<string, unknown>>));
      next = (page['odata.nextLink'] as string | undefined)?.slice(crm.url.length);
      pages++;
    }
    expect(pages).toBe(2);
    expect(rows.map((row) => row.PrimaryKey)).toEqual(['5', '2', '4']);
    expect(rows[0]).toEqual({
      PrimaryKey: '5',
      EntityName: 'contact',
      'contact.contact_id': 5,
      'contact.name': 'C5',
      'contact.department': 'D5',
      'contact.updated': '2026-11-27T12:10:01.0000000',
    });

    const skipped = json(
      await get(
        `/Cust1/api/v1/archive/dynamic?$select=contact.contact_id&$orderBy=contact.contact_id desc&$skip=3`,
      ),
    );
    expect((skipped.value as Array<{ PrimaryKey: string }>).map((row) => row.PrimaryKey)).toEqual(['2', '1']);
    const unknown = await get(
      `/Cust1/api/v1/archive/dynamic?$select=contact.name&$filter=${encodeURIComponent("contact.name like 'C%'")}`,
    );
    expect(unknown.status).toBe(501);
    expect(json(unknown).Error).toMatch(/operator like/);
    expect((await get('/Cust1/api/v1/archive/dynamic?$select=contact.name,person.firstname')).status).toBe(
      501,
    );
    expect(
      (await get('/Cust1/api/v1/archive/dynamic?$select=contact.name&$filter=contact.name%20eq')).status,
    ).toBe(400);
  });

  it('serves the webhooks: list by state, one, LastError, usage counters, and PATCH to Active after the test delivery', async () => {
    let answer = 500;
    const target = await startTarget(() => answer);
    cleanups.push(target.close);
    await crm.core.register('Cust1', { name: 'rows', events: ['contact.created'], targetUrl: target.url });
    change({ op: 'create', table: 'contact', id: 1 });
    await crm.core.dispatcher.idle();

    const list = await get('/Cust1/api/v1/Webhook?statusFilter=Active');
    expect((JSON.parse(list.body) as unknown[]).length).toBe(1);
    expect(JSON.parse((await get('/Cust1/api/v1/Webhook?statusFilter=TooManyErrors')).body)).toEqual([]);
    expect(json(await get('/Cust1/api/v1/Webhook/1'))).toMatchObject({
      WebhookId: 1,
      Name: 'rows',
      State: 'Active',
      TargetUrl: target.url,
      Secret: null,
    });
    expect(JSON.parse((await get('/Cust1/api/v1/Webhook/1/LastError')).body)).toMatch(/HTTP 500$/);
    const usage = json(
      await get(
        '/Cust1/api/v1/Archive/dynamic?$select=webhook_usage.webhook_usage_id,webhook_usage.total_calls,webhook_usage.consecutive_errors&$filter=webhook_usage.webhook_usage_id%20eq%201',
      ),
    );
    expect(usage.value).toEqual([
      {
        PrimaryKey: '1',
        EntityName: 'webhook_usage',
        'webhook_usage.webhook_usage_id': 1,
        'webhook_usage.total_calls': 3,
        'webhook_usage.consecutive_errors': 3,
      },
    ]);

    const patch = (body: unknown) =>
      httpRequest(
        'PATCH',
        `${crm.url}/Cust1/api/v1/Webhook/1`,
        { ...BASIC, 'content-type': 'application/json' },
        JSON.stringify(body),
      );
    expect((await patch({ State: 'Stopped' })).status).toBe(200);
    const refused = await patch({ State: 'Active' });
    expect(refused.status).toBe(400);
    expect(json(refused).Error).toMatch(/answered the test delivery with 500/);
    expect(target.of('test')).toHaveLength(1);
    answer = 200;
    const accepted = await patch([{ op: 'replace', path: '/State', value: 'Active' }]);
    expect(json(accepted)).toMatchObject({ State: 'Active' });
    expect((await patch({ Nme: 'x' })).status).toBe(400);
  });

  it('registers a webhook by POST only when its target answered the test delivery with 200', async () => {
    let answer = 503;
    const target = await startTarget(() => answer);
    cleanups.push(target.close);
    const post = () =>
      httpRequest(
        'POST',
        `${crm.url}/Cust1/api/v1/Webhook`,
        { ...BASIC, 'content-type': 'application/json' },
        JSON.stringify({
          Name: 'mine',
          Events: ['contact.changed'],
          TargetUrl: target.url,
          Secret: 'x',
          Properties: { a: 1 },
        }),
      );
    const refused = await post();
    expect(refused.status).toBe(400);
    expect(crm.core.store.context('Cust1').webhooks).toEqual([]);
    answer = 200;
    const created = await post();
    expect(created.status).toBe(201);
    expect(json(created)).toMatchObject({
      WebhookId: 1,
      Name: 'mine',
      State: 'Active',
      Secret: null,
      Properties: { a: 1 },
    });
    expect(target.of('test')[1]?.headers['x-superoffice-signature']).toBeDefined();
  });

  it('shows faults: 429 with Retry-After beyond N requests per second per tenant, 503 while unavailable', async () => {
    crm.faults.set({ rateLimitPerSecond: 2 });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await get('/Cust1/api/v1/Webhook')).status);
    expect(statuses).toEqual([200, 200, 429]);
    expect((await get('/Other/api/v1/Webhook')).status).toBe(200);
    expect((await get('/Cust1/api/v1/Webhook')).headers['retry-after']).toBe('1');
    vi.setSystemTime(Date.now() + 1000);
    expect((await get('/Cust1/api/v1/Webhook')).status).toBe(200);

    crm.faults.set({ unavailableUntil: Date.now() + 30_000 });
    const down = await get('/Cust1/api/v1/Webhook');
    expect(down.status).toBe(503);
    expect(down.headers['retry-after']).toBe('30');
    vi.setSystemTime(Date.now() + 30_000);
    expect((await get('/Cust1/api/v1/Webhook')).status).toBe(200);
  });

  it('counts the API calls it served per tenant and kind, refused ones included, and shows them in /sim/status', async () => {
    change({ op: 'create', table: 'contact', id: 1 });
    await get('/api/state/Cust1', {});
    await get('/Cust1/api/v1/Contact/1');
    await get('/Cust1/api/v1/contact/2');
    await get('/Cust1/api/v1/Webhook', {});
    await get('/Cust1/api/v1/archive/dynamic?$select=contact.contact_id,contact.updated');
    await get('/Cust1/api/v1/Archive/dynamic?$select=webhook_usage.webhook_usage_id');
    await get('/Other/api/v1/Webhook');

    const counts = {
      total: 6,
      byKind: { state: 1, contact: 2, webhook: 1, 'archive:contact': 1, 'archive:webhook_usage': 1 },
    };
    expect(crm.calls.of('Cust1')).toEqual(counts);
    expect(crm.calls.of('Other')).toEqual({ total: 1, byKind: { webhook: 1 } });
    expect(crm.calls.of('None')).toEqual({ total: 0, byKind: {} });
    const status = json(await get('/sim/status', {})) as { contexts: Record<string, { apiCalls: unknown }> };
    expect(status.contexts.Cust1?.apiCalls).toEqual(counts);
  });
});
