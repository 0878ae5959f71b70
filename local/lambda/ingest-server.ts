import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Route, ServerlessFunction } from '../../infra/functions.js';
import { guardRequests } from '../http/guard-requests.js';
import { withoutCors } from '../http/port-guard.js';
import { writeProblem } from '../http/problem-response.js';
import {
  matchRoute,
  type ProxyHandler,
  readBody,
  routeKey,
  toApiGatewayEvent,
  writeApiGatewayError,
  writeApiGatewayResult,
} from './api-gateway.js';
import { capConnections } from './connection-cap.js';
import { createLambdaContext } from './lambda-context.js';

const API_GATEWAY_PAYLOAD_LIMIT = 10 * 1024 * 1024;
/** The whole request, headers and body (at most MAX_BODY_BYTES), must arrive within this; else 408. */
const REQUEST_TIMEOUT_MS = 30_000;
const LOOPBACK = '127.0.0.1';

export interface IngestServer {
  server: Server;
  /** Stops accepting connections and waits for the requests in flight. */
  close(): Promise<void>;
}

export interface IngestServerOptions {
  functions: readonly ServerlessFunction[];
  handlers: ReadonlyMap<string, unknown>;
  region: string;
  log: (line: string) => void;
  /** The ingest's MAX_BODY_BYTES: reading stops past it and the answer is 413 at once. */
  maxBodyBytes: number;
  /**
   * Open connections served at once. At the cap, a new connection closes the one that has waited
   * longest without a request in progress, else the oldest whose body is still arriving (see
   * connection-cap.ts); when every one has a whole request in progress, the newcomer's request is
   * answered 503 with Retry-After, its body unread.
   */
  maxConnections: number;
  /**
   * How long a request's headers may take to arrive, from the connection's opening (or the first byte
   * of a later request on it); then 408 and the connection is closed.
   */
  headersTimeoutMs: number;
}

/**
 * API Gateway's HTTP API in front of the functions that have `httpApi` events, bounded so that a
 * flood cannot exhaust the process: at most `maxConnections` connections are open and no body is
 * buffered past `maxBodyBytes`, so the bodies held at once stay under their product.
 */
export function createIngestServer(options: IngestServerOptions): IngestServer {
  const { functions, handlers, region, log, maxConnections, headersTimeoutMs } = options;
  const bodyLimit = Math.min(options.maxBodyBytes, API_GATEWAY_PAYLOAD_LIMIT);
  const tooLarge = (res: ServerResponse) =>
    writeProblem(res, 413, 'body-too-large', `the body is larger than ${bodyLimit} bytes`, {
      connection: 'close',
    });
  const routes: Array<{ route: Route; fn: ServerlessFunction }> = functions.flatMap((fn) =>
    fn.httpRoutes.map((route) => ({ route, fn })),
  );
  let inFlight = 0;
  let drained: (() => void) | undefined;

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '/';
    const path = url.split('?')[0] ?? '/';
    const route = matchRoute(
      routes.map((entry) => entry.route),
      req.method ?? 'GET',
      path,
    );
    const entry = routes.find((candidate) => candidate.route === route);
    if (!entry) {
      req.resume();
      return writeApiGatewayError(res, 404, 'Not Found');
    }
    if (Number(req.headers['content-length'] ?? 0) > bodyLimit) return tooLarge(res);
    const body = await readBody(req, bodyLimit);
    if (!body) return tooLarge(res);
    const event = toApiGatewayEvent(
      {
        method: req.method ?? 'GET',
        url,
        rawHeaders: req.rawHeaders,
        body,
        sourceIp: (req.socket.remoteAddress ?? LOOPBACK).replace(/^::ffff:/, ''),
        protocol: `HTTP/${req.httpVersion}`,
      },
      { routeKey: routeKey(entry.route) },
    );
    const handler = handlers.get(entry.fn.name) as ProxyHandler;
    const context = createLambdaContext({
      functionName: entry.fn.name,
      timeoutMs: entry.fn.timeoutMs,
      region,
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      const result = await Promise.race([
        handler(event, context),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`Task timed out after ${entry.fn.timeoutMs} ms`)),
            entry.fn.timeoutMs,
          );
        }),
      ]);
      writeApiGatewayResult(res, result);
    } catch (error) {
      log(`[${entry.fn.name}] ${error instanceof Error ? error.stack : String(error)}`);
      writeApiGatewayError(res, 500, 'Internal Server Error');
    } finally {
      clearTimeout(timer);
    }
  };

  const server = createServer(
    {
      headersTimeout: headersTimeoutMs,
      requestTimeout: Math.max(REQUEST_TIMEOUT_MS, headersTimeoutMs),
      // Node looks for expired headers at this interval: a timeout is then at most this late.
      connectionsCheckingInterval: Math.min(1000, headersTimeoutMs),
    },
    // With HOST the CRM reaches this port from another host: no Host or Origin check here (a page cannot
    // send a delivery's headers without a preflight, which no route answers), but no answer may let a
    // page read it (SECURITY.md, "Local runtime").
    withoutCors(
      guardRequests(
        'ingest',
        async (req, res) => {
          if (cap.exceeded()) {
            return writeProblem(
              res,
              503,
              'too-many-connections',
              `more than ${maxConnections} connections at once (LOCAL_MAX_CONNECTIONS); retry later`,
              { 'retry-after': '1', connection: 'close' },
            );
          }
          inFlight++;
          try {
            await handle(req, res);
          } finally {
            inFlight--;
            if (inFlight === 0) drained?.();
          }
        },
        log,
      ),
    ),
  );
  const cap = capConnections(server, maxConnections);
  server.keepAliveTimeout = 65_000;

  return {
    server,
    async close() {
      const closed = new Promise<void>((done) => server.close(() => done()));
      server.closeIdleConnections();
      if (inFlight > 0) await new Promise<void>((done) => (drained = done));
      server.closeAllConnections();
      await closed;
    },
  };
}
