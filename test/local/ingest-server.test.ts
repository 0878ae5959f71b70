import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServerlessFunction } from '../../infra/functions.js';
import { createIngestServer, type IngestServer } from '../../local/lambda/ingest-server.js';

const ingestFunction: ServerlessFunction = {
  name: 'ingest',
  module: 'functions/ingest.ts',
  exportName: 'handler',
  timeoutMs: 5_000,
  httpRoutes: [{ method: 'POST', path: '/webhook' }],
  sqs: [],
};
/** Holds the answer to a body `slow` until `release()`; `arrived` counts those requests. */
let release: () => void = () => {};
let held = Promise.resolve();
let arrived = 0;
const hold = () => {
  arrived = 0;
  held = new Promise<void>((resolve) => (release = resolve));
};
/** Answers 200 with the size of the body it was given (a body `slow` once `held` settles). */
const handlers = new Map<string, unknown>([
  [
    'ingest',
    async (event: { body?: string }) => {
      if (event.body === 'slow') {
        arrived++;
        await held;
      }
      return { statusCode: 200, body: String(event.body?.length ?? 0) };
    },
  ],
]);

let ingest: IngestServer | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  release();
  for (const socket of sockets.splice(0)) socket.destroy();
  await ingest?.close();
  ingest = undefined;
});

const start = async (limits: { maxBodyBytes: number; maxConnections: number; headersTimeoutMs?: number }) => {
  ingest = createIngestServer({
    functions: [ingestFunction],
    handlers,
    region: 'us-east-1',
    log: () => {},
    headersTimeoutMs: 60_000,
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

  it('answers 503 with Retry-After beyond the connection cap while every connection has a request in progress, and serves again once one is answered', async () => {
    const port = await start({ maxBodyBytes: 64 * 1024, maxConnections: 3 });
    hold();
    const post = (body: string) => fetch(`http://127.0.0.1:${port}/webhook`, { method: 'POST', body });
    const inProgress = Array.from({ length: 3 }, () => post('slow'));
    await expect.poll(() => arrived).toBe(3);
    const refused = await post('{}');
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toMatchObject({
      type: 'urn:crm-webhook-receiver:problem:too-many-connections',
    });

    release();
    expect((await Promise.all(inProgress)).map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect((await post('{}')).status).toBe(200);
  });
});

/**
 * A slowloris connection: the start of a POST, then one more header line every 100 ms, never the
 * blank line that ends the headers. Resolves with the socket once connected; `closed` tells whether
 * the server closed it, and `received` what it answered.
 */
async function trickle(port: number) {
  const socket = await open(port);
  socket.on('error', () => {});
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write('POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n');
  let line = 0;
  const timer = setInterval(() => {
    if (!socket.destroyed) socket.write(`X-Slow-${line++}: a\r\n`);
  }, 100);
  void closed.then(() => clearInterval(timer));
  return { socket, closed, received: () => received };
}

const deliver = () =>
  fetch(`http://127.0.0.1:${port()}/webhook`, { method: 'POST', body: '{"a":1}' }).then(async (answer) => [
    answer.status,
    await answer.text(),
  ]);
let port = () => 0;

describe('the local ingest against slowloris', () => {
  it('answers real deliveries 200 while 300 connections trickle header lines at the 256 cap', async () => {
    const listening = await start({ maxBodyBytes: 64 * 1024, maxConnections: 256 });
    port = () => listening;
    const slow = [];
    for (let i = 0; i < 300; i++) slow.push(await trickle(listening));
    await new Promise((resolve) => setTimeout(resolve, 300)); // they have all sent header lines since

    const answers = [];
    for (let i = 0; i < 20; i++) answers.push(await deliver());
    answers.push(...(await Promise.all(Array.from({ length: 20 }, deliver))));

    expect(answers).toEqual(Array.from({ length: 40 }, () => [200, '7']));
    // The trickling connections gave way, longest waiting first: the newest are still open.
    expect(slow.slice(-200).every(({ socket }) => !socket.destroyed)).toBe(true);
    expect(slow.slice(0, 40).every(({ socket }) => socket.destroyed)).toBe(true);
  });

  it('keeps a connection whose request is being answered, and closes the one waiting longest instead', async () => {
    const listening = await start({ maxBodyBytes: 64 * 1024, maxConnections: 2 });
    port = () => listening;
    hold();
    const served = fetch(`http://127.0.0.1:${listening}/webhook`, { method: 'POST', body: 'slow' });
    await expect.poll(() => arrived).toBe(1); // its request is in the handler
    const slowloris = await trickle(listening);

    expect(await deliver()).toEqual([200, '7']);
    await slowloris.closed;
    release();
    expect((await served).status).toBe(200);
  });

  it('answers real deliveries 200 while every connection at the cap trickles a body after complete headers', async () => {
    const listening = await start({ maxBodyBytes: 64 * 1024, maxConnections: 4 });
    port = () => listening;
    const slow = [];
    for (let i = 0; i < 4; i++) {
      const socket = await open(listening);
      socket.on('error', () => {});
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      // Headers complete, then a body that never ends: its request is "in progress" for 30 s.
      socket.write('POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 60000\r\n\r\n{');
      const timer = setInterval(() => !socket.destroyed && socket.write(' '), 100);
      void closed.then(() => clearInterval(timer));
      slow.push({ socket, closed });
    }
    await new Promise((resolve) => setTimeout(resolve, 300)); // every one has sent its headers since

    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await deliver());

    expect(answers).toEqual(Array.from({ length: 4 }, () => [200, '7']));
    // The oldest gave way (the deliveries then reuse their kept-alive connection).
    await slow[0]!.closed;
  });

  it('answers 408 and closes a connection that has not sent its headers within LOCAL_HEADERS_TIMEOUT_MS', async () => {
    const listening = await start({ maxBodyBytes: 64 * 1024, maxConnections: 10, headersTimeoutMs: 500 });
    const silent = await open(listening);
    const silentClosed = new Promise<void>((resolve) => silent.once('close', () => resolve()));
    silent.resume(); // sends nothing at all; reads, so that it sees the server close it
    const slowloris = await trickle(listening);

    await Promise.all([slowloris.closed, silentClosed]);
    expect(slowloris.received()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    port = () => listening;
    expect(await deliver()).toEqual([200, '7']);
  });
});
