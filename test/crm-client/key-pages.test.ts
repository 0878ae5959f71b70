import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CRM_TABLES,
  CrmApiError,
  type CrmClient,
  CrmPagingError,
  createCrmClient,
  isRefusal,
  type Page,
} from '../../lib/crm/index.js';
import { startServer } from '../support/http-server.js';
import { BASIC } from './support.js';

const contact = CRM_TABLES.contact!;
const since = new Date('2026-11-27T11:00:00Z');

/**
 * How the test's CRM answers the archive: text order, each page reversed, never a nextLink, the same
 * page for ever, or in key order with the key 2 entering the listing after the first request (a row
 * changed meanwhile).
 */
type Mode = 'text' | 'reversed' | 'no-next-link' | 'endless' | 'late' | 'no-top';

/**
 * A CRM of the test's own (a real HTTP server): the tenant is running, and the archive lists the
 * primary keys 1..`rows` of contact, filtered by the key range a page asks for (`gt`, `le`), at most
 * `$top`, answered as `mode` says. Every archive request is counted.
 */
async function archiveCrm(rows: number, mode: Mode) {
  const asked: string[] = [];
  const server = await startServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://crm');
    const answer = (body: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json', date: new Date().toUTCString() });
      res.end(JSON.stringify(body));
    };
    if (!url.pathname.endsWith('/archive/dynamic')) return answer({ State: 'Running', IsRunning: true });
    const filter = url.searchParams.get('$filter') ?? '';
    asked.push(filter);
    const after = Number(/ gt (\d+)/.exec(filter)?.[1] ?? Number.NEGATIVE_INFINITY);
    const upTo = Number(/ le (\d+)/.exec(filter)?.[1] ?? Number.POSITIVE_INFINITY);
    const top = Number(url.searchParams.get('$top'));
    let keys = Array.from({ length: rows }, (_, index) => index + 1);
    if (mode === 'late' && asked.length === 1) keys = keys.filter((key) => key !== 2);
    if (mode !== 'endless') keys = keys.filter((key) => key > after && key <= upTo);
    if (mode === 'text') keys.sort((a, b) => String(a).localeCompare(String(b)));
    const page = mode === 'no-top' ? keys : keys.slice(0, top);
    if (mode === 'reversed') page.reverse();
    const more = mode === 'endless' || keys.length > top;
    answer({
      ...(more && mode !== 'no-next-link' && { 'odata.nextLink': `${url.pathname}?$skip=${top}` }),
      value: page.map((key) => ({
        PrimaryKey: String(key),
        EntityName: 'contact',
        'contact.contact_id': key,
      })),
    });
  });
  const client = createCrmClient({
    apiUrl: `${server.url}/{ContextIdentifier}/api/v1`,
    credentials: { '*': BASIC },
    limits: { pageSize: 2, perSecond: 1000 },
  });
  return { server, client, asked };
}

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

/** Every page by key as a run walks them, at most `maxPages`: the keys listed. */
async function walk(list: (afterKey: number | undefined) => Promise<Page<unknown>>, maxPages = 50) {
  const keys: string[] = [];
  let afterKey: number | undefined;
  for (let pages = 0; pages < maxPages; pages++) {
    const page = await list(afterKey);
    keys.push(...page.items.map((item) => (typeof item === 'string' ? item : (item as { id: string }).id)));
    if (page.nextKey === undefined) return keys;
    afterKey = page.nextKey;
  }
  throw new Error(`no end after ${maxPages} pages`);
}

/** The keys of every page of changed rows, and of ids, as a run lists them. */
const changedKeys = (client: CrmClient) =>
  walk((afterKey) => client.listChanged('Cust1', contact, [], since, undefined, afterKey));
const idKeys = (client: CrmClient) =>
  walk((afterKey) => client.listIds('Cust1', contact, undefined, afterKey));

describe('paging by key against a CRM that does not answer as asked', () => {
  it('keys in text order, pages of 2: refused in one line before a row is skipped, not 4 rows of 12', async () => {
    const crm = await archiveCrm(12, 'text');
    close = crm.server.close;
    const listing = changedKeys(crm.client);
    await expect(listing).rejects.toBeInstanceOf(CrmPagingError);
    await expect(idKeys(crm.client)).rejects.toThrow(
      /^the archive's contact: the CRM left the key 2 out of a page up to 10 \(it does not answer in the key order asked\): paging on would skip rows$/,
    );
    expect(isRefusal(await listing.catch((error: unknown) => error))).toBe(true);
  });

  it('full pages without odata.nextLink: paging goes on while a page is full, every row listed', async () => {
    const crm = await archiveCrm(5, 'no-next-link');
    close = crm.server.close;
    const changed = await changedKeys(crm.client);
    expect(changed).toEqual(['1', '2', '3', '4', '5']);
    const ids = await idKeys(crm.client);
    expect(ids).toEqual(['1', '2', '3', '4', '5']);
  });

  it('a CRM that ignores the key filter and always answers a next page: stopped at the check of its first page, in one line', async () => {
    const crm = await archiveCrm(5, 'endless');
    close = crm.server.close;
    await expect(changedKeys(crm.client)).rejects.toThrow(
      /^the archive's contact: the CRM answered the key 3 outside the keys asked for \(…, 2\]: it ignores the key filter, and paging would not end$/,
    );
    // The first page, and the check of its keys (up to 2) that answered 3.
    expect(crm.asked).toHaveLength(2);
  });

  it('a row that enters the listing between a page and its check: the page is asked again, and holds it', async () => {
    const crm = await archiveCrm(5, 'late');
    close = crm.server.close;
    const changed = await changedKeys(crm.client);
    expect(changed).toEqual(['1', '2', '3', '4', '5']);
    // [1, 3], its check finds 2; [1, 2] again, its check; [3, 4] with no gap after 2; [5].
    expect(crm.asked).toHaveLength(6);
  });

  it('a CRM that ignores $top (every row in one page): refused in one line, no page larger than asked reaches the run', async () => {
    const crm = await archiveCrm(50, 'no-top');
    close = crm.server.close;
    await expect(changedKeys(crm.client)).rejects.toThrow(
      /^the archive's contact: the CRM answered 50 rows to a page of 2 \(\$top\): it ignores \$top$/,
    );
    await expect(idKeys(crm.client)).rejects.toBeInstanceOf(CrmPagingError);
  });

  it('the rows of each page answered in reverse are listed in key order, none lost', async () => {
    const crm = await archiveCrm(12, 'reversed');
    close = crm.server.close;
    const ids = await idKeys(crm.client);
    expect(ids).toEqual(Array.from({ length: 12 }, (_, index) => String(index + 1)));
  });

  it('the ids of 1,000 stored rows cost 7 calls with pages of 200 (no nextLink): a check of the first page, then pages without gaps', async () => {
    const crm = await archiveCrm(1000, 'no-next-link');
    close = crm.server.close;
    const client = createCrmClient({
      apiUrl: `${crm.server.url}/{ContextIdentifier}/api/v1`,
      credentials: { '*': BASIC },
      limits: { pageSize: 200, perSecond: 1000 },
    });
    const ids = await idKeys(client);
    expect(ids).toHaveLength(1000);
    expect(crm.asked).toHaveLength(7);
  });
});

/** A CRM of the test's own whose tenant runs and whose archive always answers `archive` (200, JSON). */
async function answeringCrm(archive: unknown) {
  const server = await startServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://crm');
    res.writeHead(200, { 'content-type': 'application/json', date: new Date().toUTCString() });
    res.end(JSON.stringify(url.pathname.endsWith('/archive/dynamic') ? archive : { IsRunning: true }));
  });
  close = server.close;
  return createCrmClient({
    apiUrl: `${server.url}/{ContextIdentifier}/api/v1`,
    credentials: { '*': BASIC },
    limits: { pageSize: 2, perSecond: 1000 },
  });
}

describe('an archive answer of the wrong shape', () => {
  it.each([
    ['an empty text', ''],
    ['blanks', '  '],
    ['a number written with an exponent', '1e3'],
  ])('a PrimaryKey of %s is refused in one line, not read as a key (0, 1000)', async (_, key) => {
    const client = await answeringCrm({ value: [{ PrimaryKey: key, 'contact.contact_id': key }] });
    await expect(changedKeys(client)).rejects.toThrow(
      /^the archive's contact: the CRM answered the PrimaryKey ".*", not a whole number$/,
    );
    await expect(idKeys(client)).rejects.toBeInstanceOf(CrmPagingError);
  });

  it.each([
    ['null', null],
    ['a value array holding null', { value: [null] }],
  ])('%s is a CrmApiError naming the call, not a TypeError', async (_, body) => {
    const client = await answeringCrm(body);
    const error = await changedKeys(client).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CrmApiError);
    expect((error as Error).message).toMatch(
      /^GET \/Cust1\/api\/v1\/archive\/dynamic: the answer('s value holds a row that is no object| is not a page with a value array)$/,
    );
  });
});

describe('a state answer of the wrong shape', () => {
  it('null is a CrmApiError naming the call, not a TypeError', async () => {
    const server = await startServer((_req: IncomingMessage, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('null');
    });
    close = server.close;
    const client = createCrmClient({
      apiUrl: `${server.url}/{ContextIdentifier}/api/v1`,
      credentials: { '*': BASIC },
    });
    const error = await client.tenantState('Cust1').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CrmApiError);
    expect((error as Error).message).toBe('GET /api/state/Cust1: the answer is not a state');
  });
});
