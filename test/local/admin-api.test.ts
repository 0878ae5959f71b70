import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Row, Webhook } from '../../lib/model/types.js';
import type { StoreReader } from '../../lib/store/types.js';
import { createAdminServer } from '../../local/admin/admin-api.js';
import type { LocalQueue } from '../../local/emulators/resources.js';
import type { SqsEmulator } from '../../local/emulators/sqs-emulator.js';
import { httpRequest } from '../../tools/http-client.js';
import { startLocalQueues } from '../support/local-queues.js';
import { testSource } from '../support/local-source.js';

const row: Row = {
  context: 'Cust1',
  entity: 'contact',
  primaryKey: 42,
  status: 'active',
  fieldValues: { updated: '0001-01-01T00:00:00' },
  changedFields: ['department'],
  changedFieldSeqs: { department: 'x' },
  lastEventId: 'e2',
  lastEvent: 'contact.changed',
  lastTimestamp: '2025-05-14T16:11:02.4593434Z',
  lastSeq: 'x',
  changedByAssociateId: 5,
  eventCount: 2,
  recentSeqs: ['x'],
};

const store: StoreReader = {
  getRow: async (context, entity, primaryKey) =>
    context === row.context && entity === row.entity && primaryKey === row.primaryKey ? row : undefined,
  listRowEvents: async () => [],
  listWebhooks: async (context) =>
    context === undefined || context === 'Cust1'
      ? [
          {
            context: 'Cust1',
            webhookId: 9,
            webhookName: 'w',
            state: 1,
            stateName: 'Stopped',
            transitions: [{ seq: 't#e', eventId: 'e', timestamp: 't', state: 1 }],
          } as Webhook,
        ]
      : [],
  listRecoveries: async () => [],
};

let emulator: SqsEmulator;
let client: SQSClient;
let queues: LocalQueue[];
let server: Server;
let base: string;
let ready = false;

beforeAll(async () => {
  ({ emulator, client, queues } = await startLocalQueues({ stage: 'local' }));
  const peek = emulator.peek;
  server = createAdminServer({
    source: testSource({ store, sqs: client, queues, peek }),
    queues,
    peek,
    isReady: () => ready,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.close();
  client.destroy();
  await emulator.close();
});

const get = async (path: string, init?: RequestInit) => {
  const answer = await fetch(`${base}${path}`, init);
  return { status: answer.status, body: (await answer.json()) as unknown };
};

describe('admin API', () => {
  it('answers /health with 503 until ready, then {"status":"ok"}', async () => {
    expect(await get('/health')).toEqual({ status: 503, body: { status: 'starting' } });
    ready = true;
    expect(await get('/health')).toEqual({ status: 200, body: { status: 'ok' } });
  });

  it('shows a row without its bookkeeping, 404 for an unknown one, 400 for a bad key', async () => {
    const { status, body } = await get('/rows/Cust1/contact/42');
    expect(status).toBe(200);
    expect(body).toEqual({
      context: 'Cust1',
      entity: 'contact',
      primaryKey: 42,
      status: 'active',
      fieldValues: { updated: '0001-01-01T00:00:00' },
      values: null,
      changedFields: ['department'],
      lastEventId: 'e2',
      lastEvent: 'contact.changed',
      lastTimestamp: '2025-05-14T16:11:02.4593434Z',
      changedByAssociateId: 5,
      eventCount: 2,
    });
    expect((await get('/rows/Cust1/contact/43')).status).toBe(404);
    expect((await get('/rows/Cust1/invoice/42')).status).toBe(400);
    expect((await get('/rows/Cust1/contact/abc')).status).toBe(400);
  });

  it('lists webhooks and gaps', async () => {
    expect((await get('/webhooks')).body).toEqual([
      expect.objectContaining({
        webhookId: 9,
        stateName: 'Stopped',
        // Each transition with its state's name: the page writes none of them.
        transitions: [{ seq: 't#e', eventId: 'e', timestamp: 't', state: 1, stateName: 'Stopped' }],
      }),
    ]);
    expect((await get('/gaps?context=Cust1')).body).toHaveLength(1);
    expect((await get('/gaps?context=Other')).body).toEqual([]);
  });

  it('counts queue messages and shows parked deliveries with their reason, without consuming them', async () => {
    const parked = queues.find((queue) => queue.key === 'parked')!;
    await client.send(
      new SendMessageCommand({
        QueueUrl: parked.url,
        MessageBody: '{"Event":"person.created"}',
        MessageGroupId: 'Cust1:person:1',
        MessageDeduplicationId: 'd1',
        MessageAttributes: { reason: { DataType: 'String', StringValue: 'unknown-event' } },
      }),
    );
    for (let i = 0; i < 2; i++) {
      expect((await get('/parked')).body).toEqual([
        expect.objectContaining({
          reason: 'unknown-event',
          body: '{"Event":"person.created"}',
          receiveCount: 0,
        }),
      ]);
    }
    const { body } = await get('/queues');
    expect(body).toContainEqual(expect.objectContaining({ key: 'parked', visible: 1, inFlight: 0, dlq: 0 }));
    expect((body as Array<{ key: string }>).map((queue) => queue.key)).toEqual([
      'contact',
      'activity',
      'webhookState',
      'entities',
      'parked',
      'reconcile',
    ]);
  });

  it("GET /parked: a body that is not an envelope (null, an array, not JSON) has the headers' event and EventId; the parked DLQ follows", async () => {
    const parked = queues.find((queue) => queue.key === 'parked')!;
    const send = (url: string, body: string, eventId: string) =>
      client.send(
        new SendMessageCommand({
          QueueUrl: url,
          MessageBody: body,
          MessageGroupId: 'parked',
          MessageDeduplicationId: eventId,
          MessageAttributes: Object.fromEntries(
            Object.entries({ event: 'contact.created', eventId, reason: 'invalid-event' }).map(
              ([name, value]) => [name, { DataType: 'String', StringValue: value }],
            ),
          ),
        }),
      );
    await send(parked.url, 'null', 'e-null');
    await send(parked.url, '[{"Event":"x"}]', 'e-array');
    await send(parked.url, '{"Event":7,', 'e-broken');
    await send(parked.dlq.url, '{"Event":"sale.created","EventId":"e-body"}', 'e-dead');

    const { status, body } = await get('/parked');

    expect(status).toBe(200);
    const shown = (body as Array<Record<string, unknown>>).map(({ where, event, eventId, reason }) => ({
      where,
      event,
      eventId,
      reason,
    }));
    expect(shown.slice(-4)).toEqual([
      { where: 'parked', event: 'contact.created', eventId: 'e-null', reason: 'invalid-event' },
      { where: 'parked', event: 'contact.created', eventId: 'e-array', reason: 'invalid-event' },
      { where: 'parked', event: 'contact.created', eventId: 'e-broken', reason: 'invalid-event' },
      // The body's own, where it has them.
      { where: 'dlq', event: 'sale.created', eventId: 'e-body', reason: 'invalid-event' },
    ]);
  });

  it('redrives an empty DLQ, and 404s unknown queues and routes, 405 wrong methods', async () => {
    expect(await get('/queues/webhook-state/redrive', { method: 'POST' })).toEqual({
      status: 200,
      body: { queue: 'webhookState', status: 'COMPLETED', moved: 0 },
    });
    expect((await get('/queues/nope/redrive', { method: 'POST' })).status).toBe(404);
    expect((await get('/queues/contact/redrive')).status).toBe(405);
    expect((await get('/nothing')).status).toBe(404);
  });

  it('refuses a Host other than its own loopback host:port (DNS rebinding) and any foreign Origin (CSRF)', async () => {
    const port = new URL(base).port;
    const raw = (method: string, path: string, headers: Record<string, string>) =>
      httpRequest(method, `${base}${path}`, headers);

    // Tools and same-origin pages are served, by either loopback name.
    expect((await raw('GET', '/webhooks', { host: `localhost:${port}` })).status).toBe(200);
    expect((await raw('GET', '/webhooks', { origin: `http://127.0.0.1:${port}` })).status).toBe(200);

    // A rebound name resolving to 127.0.0.1, or the right name on another port, is refused.
    for (const host of [
      `evil.example:${port}`,
      'localhost',
      `127.0.0.1:${Number(port) + 1}`,
      `[::1]:${port}`,
    ]) {
      const answer = await raw('GET', '/rows/Cust1/contact/42', { host });
      expect({ host, status: answer.status }).toEqual({ host, status: 403 });
      expect(answer.body).not.toContain('Cust1');
    }
    // A cross-site POST from a browser page carries its Origin: no redrive starts.
    for (const origin of ['https://evil.example', 'null', `http://localhost:${Number(port) + 1}`]) {
      const answer = await raw('POST', '/queues/contact/redrive', { origin });
      expect({ origin, status: answer.status, body: JSON.parse(answer.body) }).toEqual({
        origin,
        status: 403,
        body: { error: 'cross-origin requests are refused' },
      });
    }
  });
});
