import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { stringifyExact } from '../lib/json-text.js';
import { guardRequests } from '../local/http/guard-requests.js';
import { guardPort } from '../local/http/port-guard.js';

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
 * A loopback JSON server: refuses (403) a Host other than its own loopback address and port, an
 * Origin other than its own and any OPTIONS, and never sends CORS headers (port-guard.js: another
 * site's page can neither write, with a cross-site POST, nor read, through DNS rebinding); then lets
 * `intercept` answer, then the first route whose pattern and method match. Used by the local admin
 * API and by `npm run ops -- dashboard`.
 */
export function createRouteServer({ name, routes, intercept, log }: RouteServerOptions): Server {
  const answer = async (req: IncomingMessage, res: ServerResponse) => {
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
  const refuse = (res: ServerResponse, reason: string) => send(res, 403, { error: reason });
  return createServer(guardPort({ sameOrigin: true, refuse }, guardRequests(name, answer, log)));
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = `${stringifyExact(body, 2)}\n`;
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}
