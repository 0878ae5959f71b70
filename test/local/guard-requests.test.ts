import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import { createAdminServer } from '../../infra/local/admin-api.js';
import { guardRequests } from '../../infra/local/guard-requests.js';
import type { StoreReader } from '../../lib/store/types.js';

/** A custom property nested 5,000 levels deep, as an authentic delivery can carry (issue 11, item 3). */
const deeplyNested = () => {
  const root: Record<string, unknown> = {};
  let node = root;
  for (let depth = 0; depth < 5_000; depth++) {
    const next: Record<string, unknown> = {};
    node.nested = next;
    node = next;
  }
  return root;
};

const store: StoreReader = {
  getRow: async () => undefined,
  listRowEvents: async () => [{ eventId: 'e1', payload: deeplyNested() }] as never,
  listWebhooks: async () => [],
  listGaps: async () => [],
};

let server: Server | undefined;
afterEach(() => {
  server?.close();
  server = undefined;
});

const listen = async (created: Server) => {
  server = created;
  await new Promise<void>((resolve) => created.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(created.address() as AddressInfo).port}`;
};

describe('no request can stop the local runtime', () => {
  it('answers 500 with a problem document when the admin API cannot serialise a history, logged once, and keeps answering', async () => {
    const lines: string[] = [];
    const base = await listen(
      createAdminServer({
        store,
        sqs: {} as SQSClient,
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
    expect(lines[0]).toMatch(/^\[admin\] could not answer: RangeError/);

    expect((await fetch(`${base}/health`)).status).toBe(200);
  });

  it('answers 500 for a listener that throws or rejects, and closes an answer that had already started', async () => {
    const lines: string[] = [];
    const base = await listen(
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
    await new Promise<void>((resolve) => sync.listen(0, '127.0.0.1', resolve));
    expect((await fetch(`http://127.0.0.1:${(sync.address() as AddressInfo).port}/`)).status).toBe(500);
    sync.close();
    expect((await fetch(`${base}/sync`)).status).toBe(500);
    await expect(fetch(`${base}/half`).then((answer) => answer.text())).rejects.toThrow();
    expect(await (await fetch(`${base}/fine`)).text()).toBe('ok');
    expect(lines).toHaveLength(4);
  });
});
