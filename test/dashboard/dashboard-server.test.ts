import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDashboard } from '../../dashboard/server.js';
import { FIXED_ENTITIES } from '../../lib/events/index.js';
import type { StoreReader } from '../../lib/store/types.js';
import { createAdminServer } from '../../local/admin/admin-api.js';
import { httpRequest } from '../../tools/http-client.js';
import { type LocalQueues, startLocalQueues } from '../support/local-queues.js';
import { testSource } from '../support/local-source.js';

const TOKEN = 'page-token-for-tests';
const store: StoreReader = {
  getRow: async () => undefined,
  listRowEvents: async () => [],
  listWebhooks: async () => [],
  listRecoveries: async () => [],
};

describe('dashboard routes of the admin API', () => {
  let local: LocalQueues;
  let server: Server;
  let base: string;
  const dynamodb = new DynamoDBClient({ region: 'us-east-1', endpoint: 'http://127.0.0.1:9' });

  beforeAll(async () => {
    local = await startLocalQueues({ stage: 'local' });
    const peek = local.emulator.peek;
    server = createAdminServer({
      source: testSource({
        store,
        sqs: local.client,
        doc: DynamoDBDocumentClient.from(dynamodb),
        queues: local.queues,
        peek,
      }),
      queues: local.queues,
      peek,
      isReady: () => true,
      dashboard: createDashboard(TOKEN),
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.close();
    dynamodb.destroy();
    await local.close();
  });

  it('serves the page with its token and a strict CSP, its assets, and nothing else of the folder', async () => {
    const page = await httpRequest('GET', `${base}/`, {});
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain(`<meta name="dashboard-token" content="${TOKEN}" />`);
    expect(page.headers['content-security-policy']).toContain("default-src 'self'");
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");

    const app = await httpRequest('GET', `${base}/dashboard/app.js`, {});
    expect({ status: app.status, type: app.headers['content-type'] }).toEqual({
      status: 200,
      type: 'text/javascript; charset=utf-8',
    });
    for (const path of ['/dashboard/server.ts', '/dashboard/index.html', '/dashboard/../admin-api.ts']) {
      expect({ path, status: (await httpRequest('GET', `${base}${path}`, {})).status }).toEqual({
        path,
        status: 404,
      });
    }
    // The Host check covers the page too.
    expect((await httpRequest('GET', `${base}/`, { host: 'evil.example' })).status).toBe(403);
  });

  it('answers the outcome series, the delivery feed and where the data comes from', async () => {
    const outcomes = JSON.parse((await httpRequest('GET', `${base}/outcomes`, {})).body);
    expect(outcomes.outcomes).toEqual(['applied', 'late', 'duplicate', 'parked', 'refused']);
    expect(outcomes.perMinute).toHaveLength(60);
    expect(JSON.parse((await httpRequest('GET', `${base}/deliveries?after=0`, {})).body)).toEqual([]);
    expect(JSON.parse((await httpRequest('GET', `${base}/source`, {})).body)).toEqual({
      kind: 'local',
      name: 'local runtime',
      live: true,
      parkedOnRequest: false,
      parkedNote: 'Read without receiving them: looking changes nothing.',
      replayNote: "Decided with the runtime's settings as they are now (ENTITIES, ALLOW_UNSIGNED, secrets).",
      subscriptionsNote: expect.stringContaining('Counted by the local bus since this start'),
      // The webhook states by name, in order (lib/events/states.ts): the page's filter and counts.
      webhookStates: ['Active', 'Stopped', 'TooManyErrors'],
    });
  });

  it("refuses a browser's POST without the page token, and serves it with the token or from a tool", async () => {
    const origin = new URL(base).origin;
    const redrive = (headers: Record<string, string>) =>
      httpRequest('POST', `${base}/queues/contact/redrive`, headers);
    const refused: Array<Record<string, string>> = [
      { origin },
      { 'sec-fetch-site': 'same-origin' },
      { origin, 'x-dashboard-token': `${TOKEN}x` },
      { origin, 'x-dashboard-token': '' },
    ];
    for (const headers of refused) {
      const answer = await redrive(headers);
      expect({
        headers,
        status: answer.status,
        type: answer.headers['content-type'],
        body: JSON.parse(answer.body),
      }).toEqual({
        headers,
        status: 403,
        type: 'application/problem+json',
        body: {
          type: 'urn:crm-webhook-receiver:problem:dashboard-token',
          title: 'Forbidden',
          status: 403,
          detail: "x-dashboard-token: missing or not this page's token; reload the page",
        },
      });
      expect(answer.headers['x-frame-options']).toBe('DENY');
    }
    expect((await redrive({ origin, 'x-dashboard-token': TOKEN })).status).toBe(200);
    expect((await redrive({})).status).toBe(200);
    // Reads need no token.
    expect((await httpRequest('GET', `${base}/queues`, { origin })).status).toBe(200);
  });

  it('lists the entities a row can have from the registry, and a row of another entity is a 400 naming them', async () => {
    const entities = JSON.parse((await httpRequest('GET', `${base}/entities`, {})).body);
    expect(entities).toEqual({ fixed: FIXED_ENTITIES, dynamic: ['list.<name>', 'y_<table>'] });
    expect(entities.fixed).toEqual(
      expect.arrayContaining(['contact', 'activity', 'person', 'sale', 'quote']),
    );

    const refused = await httpRequest('GET', `${base}/rows/Cust1/invoice/42`, {});
    expect({ status: refused.status, body: JSON.parse(refused.body) }).toEqual({
      status: 400,
      body: { error: `entity invoice: one of ${FIXED_ENTITIES.join(', ')}, list.<name>, y_<table> accepted` },
    });
    for (const entity of ['person', 'list.category', 'y_equipment'])
      expect((await httpRequest('GET', `${base}/rows/Cust1/${entity}/42`, {})).status).toBe(404);
  });

  it('refuses a replay whose max is not a positive integer, or whose event pattern the wildcard matcher refuses, before receiving anything', async () => {
    const answer = await httpRequest('POST', `${base}/parked/replay?max=0`, {});
    expect({ status: answer.status, body: JSON.parse(answer.body) }).toEqual({
      status: 400,
      body: { error: 'max 0: a positive integer accepted' },
    });
    // The DynamoDB client here answers nothing: a refusal that came after taking the lock would be a 500.
    const pattern = await httpRequest(
      'POST',
      `${base}/parked/replay?event=${encodeURIComponent('person.**')}`,
      {},
    );
    expect({ status: pattern.status, body: JSON.parse(pattern.body) }).toEqual({
      status: 400,
      body: { error: 'invalid event pattern at event: consecutive * are not allowed in a wildcard' },
    });
  });
});
