import { afterEach, describe, expect, it } from 'vitest';
import { isCrmApiHost } from '../../lib/crm/endpoints.js';
import { CRM_TABLES, CrmApiError, createCrmClient, tenantEndpoints } from '../../lib/crm/index.js';
import { startServer } from '../support/http-server.js';
import { BASIC } from './support.js';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

/** A CRM of the test's own whose tenant state names `api` (built from its own URL) as the tenant's API. */
async function stateNaming(api: (url: string) => string) {
  const paths: string[] = [];
  const server = await startServer((req, res) => {
    paths.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      req.url?.startsWith('/api/state/')
        ? JSON.stringify({ State: 'Running', IsRunning: true, Api: api(server.url) })
        : JSON.stringify({ ContactId: 7 }),
    );
  });
  close = server.close;
  const client = createCrmClient({
    apiUrl: `${server.url}/{ContextIdentifier}/api/v1`,
    credentials: { '*': BASIC },
    ...tenantEndpoints(),
  });
  return { client, paths };
}

describe("a tenant state's Api is followed only within CRM_API_URL's domain", () => {
  it('an Api on another host is refused in one line, and the tenant is not called there', async () => {
    const { client } = await stateNaming(() => 'http://169.254.169.254/Cust1/api');
    const error = await client.tenantState('Cust1').then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(CrmApiError);
    expect((error as Error).message).toBe(
      "GET /api/state/Cust1: its Api is not an https host of CRM_API_URL's domain",
    );
  });

  it('an Api on the same host is followed', async () => {
    const { client, paths } = await stateNaming((url) => `${url}/h2/Cust1/api`);
    expect((await client.tenantState('Cust1')).running).toBe(true);
    await client.getRow('Cust1', CRM_TABLES.contact!, 7).catch(() => undefined);
    expect(paths.some((path) => path.startsWith('/h2/Cust1/api/v1/'))).toBe(true);
  });

  it.each([
    ['https://sod3.superoffice.com/Cust1/api', true],
    ['https://online.superoffice.com/Cust1/api', true],
    ['http://sod3.superoffice.com/Cust1/api', false],
    ['https://superoffice.com.evil.example/Cust1/api', false],
    ['https://evil.example/Cust1/api', false],
    ['https://user:pw@sod3.superoffice.com/Cust1/api', false],
    ['not a url', false],
  ])('online.superoffice.com: %s → %s', (api, expected) => {
    expect(isCrmApiHost('https://online.superoffice.com/{ContextIdentifier}/api/v1', api)).toBe(expected);
  });
});
