import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CrmApiError, createCrmClient } from '../../lib/crm/index.js';
import type { RunningCrm } from '../../tools/crm/start.js';
import { startTarget } from '../crm/support.js';
import { startServer } from '../support/http-server.js';
import { BASIC, clientOf, simulator, systemUser } from './support.js';

let crm: RunningCrm;
let stop: () => Promise<void>;
let answer: number;
let target: Awaited<ReturnType<typeof startTarget>>;

beforeEach(async () => {
  ({ crm, stop } = await simulator());
  answer = 500;
  target = await startTarget(() => answer);
});
afterEach(async () => {
  await target.close();
  await stop();
});

describe('the webhooks of a tenant', () => {
  it('lists them by state, reads one, its last error and usage counters, and sets it Active again', async () => {
    await crm.core.register('Cust1', { name: 'rows', events: ['contact.created'], targetUrl: target.url });
    // Nine failed attempts in a row: the CRM disables the webhook.
    for (let id = 1; id <= 3; id++) {
      crm.core.change('Cust1', { op: 'create', table: 'contact', id } as never);
      await crm.core.dispatcher.idle();
    }
    const client = clientOf(crm, { credentials: { Cust1: systemUser(crm) } });
    expect(await client.listWebhooks('Cust1', 'Active')).toEqual([]);
    const [disabled] = await client.listWebhooks('Cust1', 'TooManyErrors');
    expect(disabled).toMatchObject({
      WebhookId: 1,
      Name: 'rows',
      State: 'TooManyErrors',
      TargetUrl: target.url,
    });
    expect(await client.getWebhook('Cust1', 1)).toMatchObject({
      State: 'TooManyErrors',
      Events: ['contact.created'],
    });
    expect(await client.webhookLastError('Cust1', 1)).toMatch(/HTTP 500$/);
    expect(await client.webhookUsage('Cust1', 1)).toEqual({
      totalCalls: 9,
      totalErrors: 9,
      consecutiveErrors: 9,
      lastError: expect.stringMatching(/HTTP 500$/),
    });
    expect(await client.webhookUsage('Cust1', 99)).toBeUndefined();

    // The CRM posts its test delivery first and refuses unless it was answered 200.
    const refused = await client.activateWebhook('Cust1', 1).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(CrmApiError);
    expect((refused as Error).message).toMatch(
      /^PATCH \/Cust1\/api\/v1\/Webhook\/1 answered HTTP 400: the target URL .* answered the test delivery with 500, not 200$/,
    );
    answer = 200;
    expect(await client.activateWebhook('Cust1', 1)).toMatchObject({ WebhookId: 1, State: 'Active' });
    expect(target.of('test')).toHaveLength(2);
    await expect(client.getWebhook('Cust1', 7)).rejects.toMatchObject({ status: 404 });
  });
});

describe('usage counters of the wrong shape', () => {
  it.each([
    ['null', null],
    ['a row that is null', { value: [null] }],
    ['a count that is no number', { value: [{ 'webhook_usage.total_errors': 'n/a' }] }],
  ])('%s: no counters (undefined), not a TypeError or NaN', async (_, body) => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
    try {
      const client = createCrmClient({
        apiUrl: `${server.url}/{ContextIdentifier}/api/v1`,
        credentials: { '*': BASIC },
      });
      expect(await client.webhookUsage('Cust1', 1)).toBeUndefined();
    } finally {
      await server.close();
    }
  });
});
