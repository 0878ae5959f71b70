import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSubscriptions } from '../../lib/bus/subscriptions.js';
import type { StoreReader } from '../../lib/store/types.js';
import { createAdminServer } from '../../local/admin/admin-api.js';
import { startLocalBus } from '../../local/bus/local-bus.js';
import type { LocalBus } from '../../local/bus/types.js';
import { removeJournals, tempJournal } from '../support/bus.js';
import { testSource } from '../support/local-source.js';

/** GET /subscriptions and /subscriptions/{name}: the local bus's view, through the admin server. */
const store: StoreReader = {
  getRow: async () => undefined,
  listRowEvents: async () => [],
  listWebhooks: async () => [],
  listRecoveries: async () => [],
};

let target: Server;
let admin: Server;
let bus: LocalBus;
let sqs: SQSClient;
let base: string;

beforeAll(async () => {
  target = createServer((req, res) => {
    req.resume();
    res.statusCode = req.url === '/down' ? 500 : 204;
    res.end();
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  bus = await startLocalBus({
    subscriptions: parseSubscriptions(
      `- { name: up, pattern: { detail-type: [sale.sold] }, target: { url: "${url}/up" } }
- { name: down, pattern: { detail-type: [sale.sold] }, target: { url: "${url}/down" }, retry: { attempts: 1 } }
`,
      'subscriptions.yml',
      'local',
    ),
    journalPath: tempJournal(),
    backoff: { baseMs: 5, maxMs: 5 },
  });
  sqs = new SQSClient({ region: 'us-east-1' });
  admin = createAdminServer({
    source: testSource({ store, sqs, queues: [], peek: () => [], subscriptions: () => bus.view() }),
    queues: [],
    peek: () => [],
    isReady: () => true,
  });
  await new Promise<void>((resolve) => admin.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(admin.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await bus.close();
  removeJournals();
  sqs.destroy();
  await new Promise((resolve) => admin.close(resolve));
  await new Promise((resolve) => target.close(resolve));
});

const get = async (path: string) => {
  const answer = await fetch(`${base}${path}`);
  return { status: answer.status, body: (await answer.json()) as unknown };
};

describe('admin API: subscriptions', () => {
  it("lists each subscription's deliveries, failures and DLQ, one by name, and 404 names the known ones", async () => {
    const [published] = await bus.publish([
      { Source: 'crm-webhook-receiver', DetailType: 'sale.sold', Detail: '{"EventId":"e-1"}' },
    ]);
    await bus.idle();
    const id = published?.ok ? published.eventId : '';

    const all = await get('/subscriptions');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject([
      {
        name: 'up',
        pattern: { 'detail-type': ['sale.sold'] },
        matched: 1,
        delivered: 1,
        failed: 0,
        recent: [{ id, eventId: 'e-1', attempts: 1 }],
        dlq: [],
      },
      {
        name: 'down',
        matched: 1,
        delivered: 0,
        failed: 1,
        dlqDepth: 1,
        failures: [
          { attempt: 2, error: 'HTTP 500' },
          { attempt: 1, error: 'HTTP 500' },
        ],
        dlq: [{ id, eventId: 'e-1', detailType: 'sale.sold', attempts: 2, error: 'HTTP 500' }],
      },
    ]);
    expect(await get('/subscriptions/down')).toEqual({ status: 200, body: (all.body as unknown[])[1] });
    expect(await get('/subscriptions/other')).toEqual({
      status: 404,
      body: { error: 'no subscription other; subscriptions: up, down' },
    });
  });
});
