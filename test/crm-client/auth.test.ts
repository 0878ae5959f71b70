import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CRM_TABLES, CrmApiError, CrmAuthError } from '../../lib/crm/index.js';
import type { RunningCrm } from '../../tools/crm/start.js';
import { clientOf, recordingFetch, simulator, systemUser } from './support.js';

let crm: RunningCrm;
let stop: () => Promise<void>;
const contact = CRM_TABLES.contact!;
const LOGIN = '/Login/api/PartnerSystemUser/Authenticate';

beforeEach(async () => {
  vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-11-27T12:00:00Z') });
  ({ crm, stop } = await simulator());
  for (let id = 1; id <= 5; id++) crm.core.change('Cust1', { op: 'create', table: 'contact', id } as never);
});
afterEach(async () => {
  vi.useRealTimers();
  await stop();
});

describe('the credential step', () => {
  it('authenticates a system user once per tenant, shared by concurrent calls, and calls with SOTicket + SO-AppToken', async () => {
    const { fetch, calls } = recordingFetch();
    const client = clientOf(crm, { fetch, credentials: { Cust1: systemUser(crm) } });
    const states = await Promise.all([1, 2, 3].map(() => client.listWebhooks('Cust1')));
    expect(states).toEqual([[], [], []]);
    await client.getRow('Cust1', contact, 1);
    expect(calls.filter((call) => call.path === LOGIN)).toHaveLength(1);
    expect(calls.filter((call) => call.status === 401)).toEqual([]);
  });

  it('authenticates again, once, when the ticket expires in the middle of a listing, and the listing goes on', async () => {
    const { fetch, calls } = recordingFetch();
    const client = clientOf(crm, { fetch, credentials: { '*': systemUser(crm) }, limits: { pageSize: 2 } });
    const since = new Date('2026-11-27T11:00:00Z');
    const ids: string[] = [];
    let page = await client.listChanged('Cust1', contact, ['name'], since);
    ids.push(...page.items.map((row) => row.id));
    // Six hours after its last use the simulator's ticket is gone.
    vi.setSystemTime(Date.now() + 6 * 3600_000);
    while (page.nextKey !== undefined) {
      page = await client.listChanged('Cust1', contact, ['name'], since, undefined, page.nextKey);
      ids.push(...page.items.map((row) => row.id));
    }
    expect(ids).toEqual(['1', '2', '3', '4', '5']);
    expect(calls.map((call) => `${call.path === LOGIN ? 'login' : 'archive'} ${call.status}`)).toEqual([
      'login 200',
      'archive 200',
      'archive 200', // the keys up to the first page's last: none left out
      'archive 401',
      'login 200',
      'archive 200',
      'archive 200',
    ]);
  });

  it('authenticates once for several calls refused at once with the same expired ticket', async () => {
    const { fetch, calls } = recordingFetch();
    const client = clientOf(crm, { fetch, credentials: { Cust1: systemUser(crm) } });
    await client.listWebhooks('Cust1');
    vi.setSystemTime(Date.now() + 6 * 3600_000);
    expect(await Promise.all([1, 2, 3].map(() => client.listWebhooks('Cust1')))).toEqual([[], [], []]);
    expect(calls.filter((call) => call.path === LOGIN)).toHaveLength(2);
    expect(calls.filter((call) => call.status === 401)).toHaveLength(3);
  });

  it('gives up with a one-line CrmAuthError when the CRM refuses the credentials, without a loop', async () => {
    const { fetch, calls } = recordingFetch();
    const wrongToken = clientOf(crm, {
      fetch,
      credentials: { Cust1: { ...systemUser(crm), systemUserToken: 'not-the-token' } },
    });
    const refused = await wrongToken.listWebhooks('Cust1').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(CrmAuthError);
    expect((refused as Error).message).toBe(
      'the CRM refused the system user of Cust1: unknown system user token for this tenant',
    );
    expect((refused as Error).message).not.toContain('not-the-token');

    const wrongPassword = clientOf(crm, {
      fetch,
      credentials: { '*': { type: 'basic', user: 'crm', password: 'nope' } },
    });
    await expect(wrongPassword.listWebhooks('Cust1')).rejects.toThrow(
      'GET /Cust1/api/v1/Webhook: the CRM refused the credentials of Cust1 (401)',
    );
    expect(calls.map((call) => call.status)).toEqual([200, 401]);
  });

  it('refuses a tenant with no credentials, naming the setting', async () => {
    const client = clientOf(crm, { credentials: { Cust1: systemUser(crm) } });
    const error = await client.listWebhooks('Cust2').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CrmApiError);
    expect((error as Error).message).toBe('CRM_CREDENTIALS has no entry for Cust2 and no "*" entry');
  });
});
