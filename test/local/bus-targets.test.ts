import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { BusEntry } from '../../lib/bus/entry.js';
import { parseSubscriptions } from '../../lib/bus/subscriptions.js';
import { startLocalBus } from '../../local/bus/local-bus.js';
import { MAX_ANSWER_BYTES } from '../../local/bus/targets.js';
import type { LocalBus } from '../../local/bus/types.js';
import { removeJournals, tempJournal } from '../support/bus.js';

/**
 * Targets that do not play along, on real sockets: one that never answers, one that answers with an
 * endless body. The bus must hold a bounded number of connections and read a bounded answer.
 */
const servers: Server[] = [];
const buses: LocalBus[] = [];
afterEach(async () => {
  await Promise.all(buses.splice(0).map((bus) => bus.close()));
  for (const server of servers.splice(0)) server.close();
  removeJournals();
});

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/hook`;
}

async function bus(url: string, retry: string, options: { maxInFlight?: number; timeoutMs: number }) {
  const started = await startLocalBus({
    subscriptions: parseSubscriptions(
      `- { name: slow, pattern: { source: [crm-webhook-receiver] }, target: { url: "${url}" }, retry: ${retry} }\n`,
      'subscriptions.yml',
      'local',
    ),
    journalPath: tempJournal(),
    backoff: { baseMs: 5, maxMs: 20 },
    ...options,
  });
  buses.push(started);
  return started;
}

const entries = (count: number): BusEntry[] =>
  Array.from({ length: count }, (_, i) => ({
    Source: 'crm-webhook-receiver',
    DetailType: 'contact.changed',
    Detail: `{"EventId":"e-${i}"}`,
  }));

describe('targets that do not answer as they should', () => {
  it('holds at most maxInFlight connections to a target that never answers; the other events wait their turn', async () => {
    // Arrange: a server that accepts and never answers; the test counts its open connections.
    const open = new Set<Socket>();
    let most = 0;
    let accepted = 0;
    const url = await listen(
      createServer((socket) => {
        accepted++;
        open.add(socket);
        most = Math.max(most, open.size);
        socket.on('close', () => open.delete(socket));
        socket.on('error', () => undefined);
        // Reads the request and never answers (reading also lets it see the bus close the connection).
        socket.resume();
      }),
    );
    const local = await bus(url, '{ attempts: 1 }', { maxInFlight: 3, timeoutMs: 150 });

    // Act: 24 events, each tried twice, each try cut by the 150 ms timeout.
    const results = await local.publish(entries(24));
    await local.idle();

    // Assert
    expect(results.every((result) => result.ok)).toBe(true);
    expect(most).toBeLessThanOrEqual(3);
    expect(accepted).toBe(48);
    const [view] = local.view();
    expect(view).toMatchObject({ matched: 24, delivered: 0, inFlight: 0 });
    expect(view?.dlq).toHaveLength(24);
    expect(new Set(view?.dlq.map(({ error, attempts }) => `${attempts}: ${error}`))).toEqual(
      new Set(['2: no answer within 150 ms']),
    );
  });

  it('reads at most MAX_ANSWER_BYTES of an answer that never ends, then closes the connection', async () => {
    // Arrange: 200, then up to 128 MiB of body at the pace the bus reads it, and never the end.
    const LIMIT = 128 * 1024 * 1024;
    let written = 0;
    let closedByBus = false;
    const server = createHttpServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 120);
      const more = () => {
        while (written < LIMIT) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
      };
      res.on('close', () => (closedByBus = !res.writableFinished));
      more();
    });
    const url = await listen(server as unknown as Server);
    const local = await bus(url, '{ attempts: 0 }', { timeoutMs: 20_000 });

    // Act
    await local.publish(entries(1));
    await local.idle();
    await vi.waitFor(() => expect(closedByBus, 'the connection closed by the bus').toBe(true), {
      timeout: 10_000,
      interval: 5,
    });

    // Assert: delivered on its 200, the rest of the body refused (only socket buffers beyond the bound).
    expect(local.view()[0]).toMatchObject({ delivered: 1, dlq: [] });
    expect(written).toBeGreaterThan(MAX_ANSWER_BYTES);
    expect(written).toBeLessThan(32 * 1024 * 1024);
  });
});
