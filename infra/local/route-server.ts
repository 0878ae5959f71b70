import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { stringifyExact } from '../../lib/json-text.js';
import { guardRequests } from './guard-requests.js';

/** A JSON route: the path's captured parts and the query in, the answer's body out. */
export interface AdminRoute {
  method: string;
  pattern: RegExp;
  handle: (params: string[], query: URLSearchParams) => Promise<unknown>;
}

/** An answer other than 200 that a route chooses, with a short reason for the caller. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export interface RouteServerOptions {
  /** Names the server in the log. */
  name: string;
  routes: readonly AdminRoute[];
  /** Answers a request before the routes (the dashboard's page and token check); true when it did. */
  intercept?: (req: IncomingMessage, res: ServerResponse, path: string) => boolean;
  log?: (line: string) => void;
}

/**
 * A loopback JSON server: refuses a foreign Host or Origin (see `refuseForeign`), lets `intercept`
 * answer first, then the first route whose pattern and method match. Used by the local admin API and
 * by `npm run ops -- dashboard`.
 */
export function createRouteServer({ name, routes, intercept, log }: RouteServerOptions): Server {
  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    const refused = refuseForeign(req);
    if (refused) {
      req.resume();
      return send(res, 403, { error: refused });
    }
    const url = new URL(req.url ?? '/', 'http://admin.local');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    if (intercept?.(req, res, path)) return;
    const matches = routes
      .map((route) => ({ route, match: route.pattern.exec(path) }))
      .filter((candidate) => candidate.match !== null);
    const found = matches.find((candidate) => candidate.route.method === req.method);
    req.resume();
    if (!found) {
      if (matches.length > 0) return send(res, 405, { error: `method ${req.method} not allowed on ${path}` });
      return send(res, 404, { error: `no route ${req.method} ${path}` });
    }
    let params: string[];
    try {
      params = found.match!.slice(1).map((part) => decodeURIComponent(part));
    } catch {
      return send(res, 400, { error: 'malformed path' });
    }
    let body: unknown;
    try {
      body = await found.route.handle(params, url.searchParams);
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      return send(
        res,
        error.status,
        error.status === 503 ? { status: error.message } : { error: error.message },
      );
    }
    // Serialising can fail too (a value nested too deep): guardRequests answers 500 then.
    send(res, 200, body);
  };
  return createServer(guardRequests(name, answer, log));
}

/**
 * Why a request is refused, or undefined. The Host must be the loopback address and port the request
 * arrived on (127.0.0.1 or localhost): a DNS-rebound name pointing at 127.0.0.1 carries its own name.
 * A request with an Origin header must come from this very origin: a browser adds Origin to
 * cross-site POSTs and fetches, so another site's page can neither redrive nor read. Tools (curl,
 * fetch in Node) send no Origin.
 */
export function refuseForeign(req: IncomingMessage): string | undefined {
  const port = req.socket.localPort;
  const hosts = [`127.0.0.1:${port}`, `localhost:${port}`];
  if (!hosts.includes(req.headers.host?.toLowerCase() ?? ''))
    return `Host must be 127.0.0.1:${port} or localhost:${port}`;
  const origin = req.headers.origin;
  if (origin !== undefined && !hosts.some((host) => origin.toLowerCase() === `http://${host}`))
    return 'cross-origin requests are refused';
  return undefined;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = `${stringifyExact(body, 2)}\n`;
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}
