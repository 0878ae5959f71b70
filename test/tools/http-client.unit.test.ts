import type { AddressInfo } from 'node:net';
import { createServer, type Socket } from 'node:net';
import { expect, it } from 'vitest';
import { httpRequest } from '../../tools/http-client.js';

it('an https: URL (a deployed WebhookUrl, as the smoke test sends to) is spoken to in TLS', async () => {
  const sockets: Socket[] = [];
  const first = new Promise<Buffer>((resolve) => {
    const server = createServer((socket) => {
      sockets.push(socket);
      socket.once('data', (chunk: Buffer) => {
        resolve(chunk);
        socket.destroy();
        server.close();
      });
    });
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      // Refused before connecting (node:http has no https:): what reached the server is then nothing.
      httpRequest('POST', `https://127.0.0.1:${port}/webhook`, {}, '{}').catch(() => {
        if (sockets.length === 0) resolve(Buffer.alloc(2));
      });
    });
  });

  const hello = await first;

  // A TLS record of type handshake (22), version 3.x: the ClientHello, not a plain-text POST.
  expect([hello[0], hello[1]]).toEqual([22, 3]);
});
