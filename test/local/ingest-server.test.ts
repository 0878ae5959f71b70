import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { LocalFunction } from '../../infra/local/functions.js';
import { createIngestServer, type IngestServer } from '../../infra/local/ingest-server.js';

const ingestFunction: LocalFunction = {
  name: 'ingest',
  module: 'functions/ingest.ts',
  exportName: 'handler',
  timeoutMs: 5_000,
  httpRoutes: [{ method: 'POST', path: '/webhook' }],
  sqs: [],
};
/** Answers 200 with the size of the body it was given. */
const handlers = new Map<string, unknown>([
  [
    'ingest',
    async (event: { body?: string }) => ({ statusCode: 200, body: String(event.body?.length ?? 0) }),
  ],
]);

let ingest: IngestServer | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await ingest?.close();
  ingest = undefined;
});

const start = async (limits: { maxBodyBytes: number; maxConnections: number }) => {
  ingest = createIngestServer({
    functions: [ingestFunction],
    handlers,
    region: 'us-east-1',
    log: () => {},
    ...limits,
  });
  await new Promise<void>((resolve) => ingest!.server.listen(0, '127.0.0.1', resolve));
  return (ingest.server.address() as AddressInfo).port;
};

const open = (port: number) =>
  new Promise<Socket>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
    sockets.push(socket);
  });

/**
 * Streams `total` bytes of body in 4 KiB chunks 10 ms apart (chunked or with Content-Length) and
 * returns the first answer line together with how many body bytes had been sent when it arrived.
 */
async function streamSlowly(port: number, total: number, chunked: boolean) {
  const socket = await open(port);
  socket.on('error', () => {});
  let received = '';
  let sent = 0;
  let sentWhenAnswered: number | undefined;
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
    sentWhenAnswered ??= sent;
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(
    'POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
      (chunked ? 'Transfer-Encoding: chunked\r\n\r\n' : `Content-Length: ${total}\r\n\r\n`),
  );
  const chunk = Buffer.alloc(4096, 'a');
  while (sent < total && sentWhenAnswered === undefined && !socket.destroyed) {
    socket.write(chunked ? Buffer.concat([Buffer.from('1000\r\n'), chunk, Buffer.from('\r\n')]) : chunk);
    sent += chunk.length;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 2_000))]);
  return {
    statusLine: received.split('\r\n')[0],
    sentWhenAnswered,
    total,
    closed: socket.destroyed || socket.readableEnded,
  };
}

describe('the local ingest under a flood', () => {
  it('answers 413 as soon as a slowly streamed body passes MAX_BODY_BYTES, without reading the rest', async () => {
    const port = await start({ maxBodyBytes: 64 * 1024, maxConnections: 10 });
    for (const chunked of [false, true]) {
      const result = await streamSlowly(port, 1024 * 1024, chunked);
      expect(result.statusLine).toBe('HTTP/1.1 413 Payload Too Large');
      expect(result.sentWhenAnswered).toBeLessThan(128 * 1024);
      expect(result.closed).toBe(true);
    }
  });

  it('answers 413 at once for a Content-Length over MAX_BODY_BYTES, and 200 for a body within it', async () => {
    const port = await start({ maxBodyBytes: 64 * 1024, maxConnections: 10 });
    const result = await streamSlowly(port, 65 * 1024, false);
    expect(result.statusLine).toBe('HTTP/1.1 413 Payload Too Large');
    expect(result.sentWhenAnswered).toBeLessThanOrEqual(4096); // the first chunk, written with the headers
    const fine = await fetch(`http://127.0.0.1:${port}/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: 'x'.repeat(64 * 1024),
    });
    expect([fine.status, await fine.text()]).toEqual([200, String(64 * 1024)]);
  });

  it('answers 503 with Retry-After beyond the connection cap, and serves again once connections close', async () => {
    const port = await start({ maxBodyBytes: 64 * 1024, maxConnections: 3 });
    for (let i = 0; i < 3; i++) await open(port);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const refused = await fetch(`http://127.0.0.1:${port}/webhook`, { method: 'POST', body: '{}' });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toMatchObject({
      type: 'urn:crm-webhook-receiver:problem:too-many-connections',
    });

    for (const socket of sockets.splice(0)) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await fetch(`http://127.0.0.1:${port}/webhook`, { method: 'POST', body: '{}' })).status).toBe(
      200,
    );
  });
});
