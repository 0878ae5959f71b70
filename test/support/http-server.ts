import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';

/** A real HTTP server on 127.0.0.1 answering with `handle` (which may also never answer). */
export async function startServer(handle: (req: IncomingMessage, res: ServerResponse) => void) {
  return serve(createServer(handle));
}

/** A request as a recording server read it to its end: when it ended (`Date.now()`), its path, headers and body. */
export interface RecordedRequest {
  at: number;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A real HTTP server on 127.0.0.1 that keeps what `keep` takes of every request, in the order they
 * ended, and answers each with `answer(kept, count)` (count: the requests kept so far, this one
 * included), 200 by default.
 */
export async function startRecorder<T>(
  keep: (request: RecordedRequest) => T,
  answer: (kept: T, count: number) => number = () => 200,
) {
  const received: T[] = [];
  const server = await startServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const kept = keep({ at: Date.now(), path: req.url ?? '', headers: req.headers, body });
      received.push(kept);
      res.statusCode = answer(kept, received.length);
      res.end();
    });
  });
  return { ...server, received };
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
