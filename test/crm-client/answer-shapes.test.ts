import { generateKeyPairSync } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { CRM_TABLES, CrmApiError, CrmAuthError, createCrmClient } from '../../lib/crm/index.js';
import { pendingOf } from '../../lib/reconcile/poll/pending.js';
import { startServer } from '../support/http-server.js';
import { BASIC } from './support.js';

/** A CRM of the test's own: every call answered 200 with `body` as JSON. */
let close: (() => Promise<void>) | undefined;
async function answering(
  body: unknown,
  credentials: Parameters<typeof createCrmClient>[0]['credentials'] = { '*': BASIC },
) {
  const server = await startServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  close = server.close;
  return createCrmClient({ apiUrl: `${server.url}/{ContextIdentifier}/api/v1`, credentials });
}
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function failure(call: Promise<unknown>): Promise<Error> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(CrmApiError);
  return error as Error;
}

describe('a CRM answer of the wrong shape is a one-line CrmApiError naming the call', () => {
  it('a state whose IsRunning is no boolean', async () => {
    const client = await answering({ State: 'Running', IsRunning: 'yes' });
    expect((await failure(client.tenantState('Cust1'))).message).toBe(
      'GET /api/state/Cust1: the answer is not a state',
    );
  });

  it('a row by id that is a list', async () => {
    const client = await answering([{ ContactId: 1 }]);
    expect((await failure(client.getRow('Cust1', CRM_TABLES.contact!, 1))).message).toBe(
      'GET /Cust1/api/v1/Contact/1: the answer is not a row',
    );
  });

  it('an archive page whose value is no array', async () => {
    const client = await answering({ value: 'rows' });
    const since = new Date('2026-11-27T10:00:00Z');
    expect((await failure(client.listChanged('Cust1', CRM_TABLES.contact!, [], since))).message).toBe(
      'GET /Cust1/api/v1/archive/dynamic: the answer is not a page with a value array',
    );
  });

  it('a webhook list that is no list, and a listed webhook without its fields', async () => {
    const notAList = await answering({ value: [] });
    expect((await failure(notAList.listWebhooks('Cust1'))).message).toBe(
      'GET /Cust1/api/v1/Webhook: the answer is not a list',
    );
    await close?.();
    const partial = await answering([{ WebhookId: 1, Name: 'rows' }]);
    expect((await failure(partial.listWebhooks('Cust1'))).message).toBe(
      'GET /Cust1/api/v1/Webhook: the answer is not a webhook',
    );
  });

  it('usage counters answered as text', async () => {
    const client = await answering('no counters here');
    expect((await failure(client.webhookUsage('Cust1', 1))).message).toBe(
      'GET /Cust1/api/v1/archive/dynamic: the answer is not a page of usage rows',
    );
  });

  it('an Authenticate answer without IsSuccessful: no refusal of the system user (CrmAuthError), the call named', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const client = await answering(
      { Token: 'not.a.jwt' },
      {
        '*': {
          type: 'systemUser',
          systemUserToken: 'token',
          applicationToken: 'app',
          privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        },
      },
    );
    const error = await failure(client.getWebhook('Cust1', 1));
    expect(error).not.toBeInstanceOf(CrmAuthError);
    expect(error.message).toBe(
      'POST /Login/api/PartnerSystemUser/Authenticate: the answer is not an Authenticate answer',
    );
  });
});

describe("the poll's pending requests of the wrong shape", () => {
  const request = {
    context: 'Cust1',
    reason: 'poll',
    from: '2026-11-27T10:00:00Z',
    requestedAt: '2026-11-27T10:05:00Z',
  };

  it('are read through the request schema: a well-formed list is kept, anything else is none', () => {
    expect(pendingOf({ pending: JSON.stringify([request]) })).toEqual([request]);
    for (const pending of ['{', '{"context":"Cust1"}', JSON.stringify([{ ...request, reason: 'guess' }])])
      expect(pendingOf({ pending }), pending).toEqual([]);
  });
});
