import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CRM_TABLES, CrmApiError, crmTableOf } from '../../lib/crm/index.js';
import type { RunningCrm } from '../../tools/crm/start.js';
import { clientOf, recordingFetch, simulator } from './support.js';

let crm: RunningCrm;
let stop: () => Promise<void>;
const contact = CRM_TABLES.contact!;

beforeEach(async () => {
  vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-11-27T12:00:00Z') });
  ({ crm, stop } = await simulator());
});
afterEach(async () => {
  vi.useRealTimers();
  await stop();
});

const change = (body: Record<string, unknown>) => crm.core.change('Cust1', body as never);
const at = (iso: string) => vi.setSystemTime(new Date(iso));

describe('the rows changed since a time', () => {
  it('lists created-never-updated and updated rows, not older ones, page by page, resumable by another client', async () => {
    for (const id of [1, 2, 3]) change({ op: 'create', table: 'contact', id, fields: { name: `Old${id}` } });
    at('2026-11-27T12:10:00Z');
    for (const id of [4, 5, 6]) change({ op: 'create', table: 'contact', id, fields: { name: `New${id}` } });
    at('2026-11-27T12:10:01.5Z');
    change({ op: 'change', table: 'contact', id: 2, fields: { department: 'Sales' } });

    const since = new Date('2026-11-27T12:05:00Z');
    const { fetch, calls } = recordingFetch();
    const first = await clientOf(crm, { fetch, limits: { pageSize: 2 } }).listChanged(
      'Cust1',
      contact,
      ['name', 'department'],
      since,
    );
    expect(first.items.map((row) => row.id)).toEqual(['2', '4']);
    expect(first.continuation).toBeDefined();
    // The same values the CRM holds, as it wrote them: the minimum date for "never updated" included.
    expect(first.items[0]!.values).toEqual({
      contact_id: 2,
      name: 'Old2',
      department: 'Sales',
      updated: '2026-11-27T12:10:01.5000000',
      registered: '2026-11-27T12:00:00.0000000',
    });
    expect(first.items[1]!.values).toMatchObject({
      updated: '0001-01-01T00:00:00',
      registered: '2026-11-27T12:10:00.0000000',
    });
    const query = new URL(`http://x${calls[0]!.path}`);
    expect(query.pathname).toBe('/Cust1/api/v1/archive/dynamic');

    // A continuation is plain text: a later run (another client) goes on from it.
    const rest = [];
    let continuation = first.continuation;
    let pages = 1;
    while (continuation) {
      const page = await clientOf(crm, { limits: { pageSize: 2 } }).listChanged(
        'Cust1',
        contact,
        ['name'],
        since,
        continuation,
      );
      rest.push(...page.items.map((row) => row.id));
      continuation = page.continuation;
      pages++;
    }
    expect(rest).toEqual(['5', '6']);
    expect(pages).toBe(2);
  });

  it('refuses a continuation that leads anywhere but the tenant archive (credentials never leave for another host)', async () => {
    const { fetch, calls } = recordingFetch();
    const client = clientOf(crm, { fetch });
    for (const continuation of [
      'http://evil.example/Cust1/api/v1/archive/dynamic?$skip=2',
      `${crm.url}/Other/api/v1/archive/dynamic?$skip=2`,
      `${crm.url}/Cust1/api/v1/Webhook`,
      '//evil.example/Cust1/api/v1/archive/dynamic',
      'http://[not a url',
    ])
      await expect(client.listChanged('Cust1', contact, [], new Date(), continuation)).rejects.toThrow(
        "the continuation is not a page of Cust1's archive: refused",
      );
    expect(calls).toEqual([]);
    await expect(client.listIds('../Cust1', contact)).rejects.toBeInstanceOf(CrmApiError);
  });

  it('lists every id of a table, paged, so that the rows deleted since can be found', async () => {
    for (const id of [3, 1, 7, 9, 4]) change({ op: 'create', table: 'contact', id });
    change({ op: 'delete', table: 'contact', id: 7 });
    const client = clientOf(crm, { limits: { pageSize: 2 } });
    const ids: string[] = [];
    let continuation: string | undefined;
    do {
      const page = await client.listIds('Cust1', contact, continuation);
      ids.push(...page.items);
      continuation = page.continuation;
    } while (continuation);
    expect(ids).toEqual(['1', '3', '4', '9']);
  });

  it('pages by key with afterKey: the changed rows and the ids after a primary key, whatever was deleted before it', async () => {
    for (const id of [3, 1, 7, 9, 4]) change({ op: 'create', table: 'contact', id });
    const client = clientOf(crm, { limits: { pageSize: 2 } });
    const since = new Date('2026-11-27T11:00:00Z');
    const first = await client.listChanged('Cust1', contact, ['name'], since);
    expect(first.items.map((row) => row.id)).toEqual(['1', '3']);
    change({ op: 'delete', table: 'contact', id: 1 }); // an offset page would now skip 4
    const next = await client.listChanged('Cust1', contact, ['name'], since, undefined, 3);
    expect(next.items.map((row) => row.id)).toEqual(['4', '7']);
    expect(next.continuation).toBeDefined();
    expect((await client.listIds('Cust1', contact, undefined, 4)).items).toEqual(['7', '9']);
    expect((await client.listIds('Cust1', contact, undefined, 9)).items).toEqual([]);
    await expect(client.listIds('Cust1', contact, undefined, 1.5)).rejects.toThrow(
      'afterKey must be a whole number, not 1.5',
    );
  });

  it('reads one row by id: found, unchanged since a time (304), deleted (404)', async () => {
    change({ op: 'create', table: 'contact', id: 42, fields: { name: 'Acme' } });
    const client = clientOf(crm);
    const found = await client.getRow('Cust1', contact, 42);
    expect(found).toMatchObject({
      status: 'found',
      row: { ContactId: 42, Name: 'Acme', UpdatedDate: '0001-01-01T00:00:00' },
    });
    expect((await client.getRow('Cust1', contact, 42, new Date())).status).toBe('unchanged');
    at('2026-11-27T12:00:05Z');
    change({ op: 'change', table: 'contact', id: 42, fields: { department: 'Sales' } });
    expect(await client.getRow('Cust1', contact, 42, new Date('2026-11-27T12:00:01Z'))).toMatchObject({
      status: 'found',
      row: { Department: 'Sales' },
    });
    change({ op: 'delete', table: 'contact', id: 42 });
    expect((await client.getRow('Cust1', contact, 42)).status).toBe('deleted');
  });

  it('confirms a delete with one call: the REST entity’s 404, or for a table without one the archive’s empty answer for that id', async () => {
    for (const table of ['contact', 'y_equipment'])
      for (const id of [1, 2]) change({ op: 'create', table, id });
    change({ op: 'delete', table: 'contact', id: 2 });
    change({ op: 'delete', table: 'y_equipment', id: 2 });
    const { fetch, calls } = recordingFetch();
    const client = clientOf(crm, { fetch });
    const equipment = crmTableOf('y_equipment')!;
    const answers = [
      await client.isDeleted('Cust1', contact, 1),
      await client.isDeleted('Cust1', contact, 2),
      await client.isDeleted('Cust1', equipment, 1),
      await client.isDeleted('Cust1', equipment, 2),
    ];
    expect(answers.map((answer) => answer.deleted)).toEqual([false, true, false, true]);
    // F of a Deleted snapshot: the CRM's clock from each answer.
    for (const answer of answers) expect(Number.isFinite(answer.crmTime)).toBe(true);
    expect(calls.map((call) => `${call.path.split('/').slice(-2).join('/')} ${call.status}`)).toEqual([
      'Contact/1 200',
      'Contact/2 404',
      'archive/dynamic 200',
      'archive/dynamic 200',
    ]);
    await expect(client.isDeleted('Cust1', equipment, 1.5)).rejects.toThrow(
      'a primary key must be a whole number, not 1.5',
    );
  });
});
