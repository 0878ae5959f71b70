import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { StoreReader } from '../../lib/store/types.js';
import { createAdminServer } from '../../local/admin/admin-api.js';
import { guardRequests } from '../../local/http/guard-requests.js';
import { listenForTest } from '../support/http-server.js';
import { testSource } from '../support/local-source.js';

/** A value JSON cannot write: an answer that cannot be built. */
const circular = () => {
  const value: Record<string, unknown> = {};
  value.self = value;
  return value;
};

const storeWith = (record: Record<string, unknown>): StoreReader => ({
  getRow: async () => undefined,
  listRowEvents: async () => [record] as never,
  listWebhooks: async () => [],
  listRecoveries: async () => [],
});

describe('no request can stop the local runtime', () => {
  it('answers a history holding a custom property nested 5,000 levels deep, as delivered', async () => {
    const body = `{"EventId":"e1","Custom":${'{"n":'.repeat(5_000)}1${'}'.repeat(5_000)}}`;
    const base = await listenForTest(
      createAdminServer({
        source: testSource({ store: storeWith({ eventId: 'e1', body }), queues: [], peek: () => [] }),
        queues: [],
        peek: () => [],
        isReady: () => true,
      }),
    );

    const answer = await fetch(`${base}/rows/Cust1/contact/42/events`);
    expect(answer.status).toBe(200);
    expect((await answer.text()).replace(/\s/g, '')).toContain(body);
  });

  it('answers 500 with a problem document when the admin API cannot serialise a history, logged once, and keeps answering', async () => {
    const lines: string[] = [];
    const base = await listenForTest(
      createAdminServer({
        source: testSource({
          store: storeWith({ eventId: 'e1', body: '{}', receivedAt: circular() }),
          queues: [],
          peek: () => [],
        }),
        queues: [],
        peek: () => [],
        isReady: () => true,
        log: (line) => lines.push(line),
      }),
    );

    const answer = await fetch(`${base}/rows/Cust1/contact/42/events`);
    expect(answer.status).toBe(500);
    expect(answer.headers.get('content-type')).toBe('application/problem+json');
    expect(await answer.json()).toMatchObject({
      status: 500,
      type: 'urn:crm-webhook-receiver:problem:internal-error',
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\[admin\] could not answer: TypeError/);

    expect((await fetch(`${base}/health`)).status).toBe(200);
  });

  it('answers 500 for a listener that throws or rejects, and closes an answer that had already started', async () => {
    const lines: string[] = [];
    const base = await listenForTest(
      createServer(
        guardRequests(
          'ingest',
          async (req, res) => {
            if (req.url === '/throw') throw new Error('boom');
            if (req.url === '/half') {
              res.writeHead(200, { 'content-length': '10' });
              res.write('12345');
              throw new Error('after the headers');
            }
            if (req.url === '/sync') return JSON.stringify({ big: 10n });
            res.end('ok');
          },
          (line) => lines.push(line),
        ),
      ),
    );

    expect((await fetch(`${base}/throw`)).status).toBe(500);
    const sync = createServer(
      guardRequests(
        'sync',
        () => {
          throw new TypeError('synchronous');
        },
        (line) => lines.push(line),
      ),
    );
    expect((await fetch(`${await listenForTest(sync)}/`)).status).toBe(500);
    expect((await fetch(`${base}/sync`)).status).toBe(500);
    await expect(fetch(`${base}/half`).then((answer) => answer.text())).rejects.toThrow();
    expect(await (await fetch(`${base}/fine`)).text()).toBe('ok');
    expect(lines).toHaveLength(4);
  });
});
