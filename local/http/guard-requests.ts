import type { IncomingMessage, ServerResponse } from 'node:http';
import { writeProblem } from './problem-response.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => unknown;

/**
 * Wraps a server's request listener so that no request can stop the process: whatever the listener
 * throws or rejects with (an answer that cannot be serialised, a bug) is logged once and answered 500
 * with a problem document; if the answer had already started, the connection is closed instead.
 */
export function guardRequests(
  name: string,
  listener: Listener,
  log: (line: string) => void = (line) => console.error(line),
): (req: IncomingMessage, res: ServerResponse) => void {
  const fail = (res: ServerResponse, error: unknown) => {
    try {
      log(
        `[${name}] could not answer: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
      writeProblem(res, 500, 'internal-error', 'the answer could not be built (see the runtime log)');
    } catch {
      res.destroy();
    }
  };
  return (req, res) => {
    try {
      const result = listener(req, res);
      if (result instanceof Promise) result.catch((error: unknown) => fail(res, error));
    } catch (error) {
      fail(res, error);
    }
  };
}
