import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';

/** A real HTTP server on 127.0.0.1 answering with `handle` (which may also never answer). */
export async function startServer(handle: (req: IncomingMessage, res: ServerResponse) => void) {
  return serve(createServer(handle));
}

/**
 * `server` (one the code under test built) on 127.0.0.1 for the running test, closed when it finishes;
 * resolves with its URL.
 */
export async function listenForTest(server: Server): Promise<string> {
  const { url, close } = await serve(server);
  onTestFinished(close);
  return url;
}

async function serve(server: Server) {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
