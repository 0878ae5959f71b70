import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCrmClient } from '../../lib/crm/client.js';
import { CrmApiError, CrmRetryLater, crmTableOf } from '../../lib/crm/index.js';
import { startServer } from '../support/http-server.js';
import { BASIC } from './support.js';

/** How the CRM's archive answers, by the id asked for: everything but a JSON page with a value array. */
const FAULTS: Record<string, (res: ServerResponse) => void> = {
  '1': (res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>Maintenance</html>'),
  '2': (res) => res.writeHead(500, { 'content-type': 'application/json' }).end('{"Error":"boom"}'),
  '3': (res) => res.writeHead(429, { 'retry-after': '0' }).end(),
  '4': (res) => res.writeHead(503, { 'content-type': 'text/html' }).end('<html>Service Unavailable</html>'),
  '5': (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"odata.error":{}}'),
  '6': (res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<html>Not Found</html>'),
};

let server: Awaited<ReturnType<typeof startServer>>;
beforeAll(async () => {
  server = await startServer((req, res) => {
    const filter = new URL(req.url ?? '/', 'http://x').searchParams.get('$filter') ?? '';
    FAULTS[filter.split(' eq ').at(-1) ?? '']?.(res) ?? res.writeHead(400).end();
  });
});
afterAll(() => server?.close());

describe('a delete of a table without a REST entity, confirmed by the archive: anything but its empty page confirms nothing', () => {
  it.each([
    ['an error page with 200', 1, CrmApiError, 'is not JSON'],
    ['a 500', 2, CrmApiError, 'HTTP 500: boom'],
    ['429 until the attempts are spent', 3, CrmRetryLater, 'HTTP 429'],
    ['a 503 error page', 4, CrmRetryLater, 'HTTP 503'],
    ['a JSON answer with no value array', 5, CrmApiError, 'is not a page with a value array'],
    ['a 404 error page', 6, CrmApiError, 'HTTP 404'],
  ])('%s: throws (the run retries or fails), never deleted', async (_, id, type, message) => {
    const client = createCrmClient({
      apiUrl: `${server.url}/{ContextIdentifier}/api/v1`,
      credentials: { '*': BASIC },
      limits: { maxAttempts: 2 },
      random: () => 0,
    });
    const answer = client.isDeleted('Cust1', crmTableOf('y_equipment')!, id);
    await expect(answer).rejects.toBeInstanceOf(type);
    await expect(answer).rejects.toThrow(message);
  });
});
