import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type {
  APIGatewayProxyEventV2,
  APIGatewayProxyResultV2,
  APIGatewayProxyStructuredResultV2,
  Context,
} from 'aws-lambda';
import type { Route } from '../../infra/functions.js';

export interface ApiGatewayRequest {
  method: string;
  /** The request target as sent: path and query string. */
  url: string;
  /** Node's `rawHeaders`: names and values alternating, in the order and spelling received. */
  rawHeaders: readonly string[];
  body: Buffer;
  sourceIp: string;
  protocol?: string;
}

export interface ApiGatewayEventOptions {
  routeKey: string;
  stage?: string;
  apiId?: string;
  accountId?: string;
  now?: Date;
}

const TEXT_TYPES =
  /^(text\/|application\/(json|xml|javascript|x-www-form-urlencoded|graphql)\b|application\/[\w.+-]+\+(json|xml)\b)/i;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The payload-format 2.0 event API Gateway's HTTP API hands to a Lambda for this request: header names
 * lower-cased with duplicates joined by commas, cookies moved to `cookies`, the query string both raw
 * and parsed (duplicates joined by commas), and the body as text when it is UTF-8 text, else base64
 * with `isBase64Encoded`.
 */
export function toApiGatewayEvent(
  request: ApiGatewayRequest,
  options: ApiGatewayEventOptions,
): APIGatewayProxyEventV2 {
  const now = options.now ?? new Date();
  // Names come from the request: joined in a Map, so `constructor` or `__proto__` is a name like any
  // other, then an object with own keys only, as the JSON event API Gateway sends.
  const joined = new Map<string, string>();
  const cookies: string[] = [];
  for (let i = 0; i + 1 < request.rawHeaders.length; i += 2) {
    const name = request.rawHeaders[i]!.toLowerCase();
    const value = request.rawHeaders[i + 1]!;
    if (name === 'cookie') {
      cookies.push(
        ...value
          .split(';')
          .map((cookie) => cookie.trim())
          .filter(Boolean),
      );
      continue;
    }
    joinValue(joined, name, value);
  }
  const headers: Record<string, string> = Object.fromEntries(joined);

  const queryStart = request.url.indexOf('?');
  const rawPath = queryStart === -1 ? request.url : request.url.slice(0, queryStart);
  const rawQueryString = queryStart === -1 ? '' : request.url.slice(queryStart + 1);
  const queryStringParameters = parseQuery(rawQueryString);

  const event: APIGatewayProxyEventV2 = {
    version: '2.0',
    routeKey: options.routeKey,
    rawPath,
    rawQueryString,
    headers,
    requestContext: {
      accountId: options.accountId ?? '123456789012',
      apiId: options.apiId ?? 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: (headers.host ?? 'localhost').split('.')[0]!.split(':')[0]!,
      http: {
        method: request.method.toUpperCase(),
        path: safeDecodePath(rawPath),
        protocol: request.protocol ?? 'HTTP/1.1',
        sourceIp: request.sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: options.routeKey,
      stage: options.stage ?? '$default',
      time: apiGatewayTime(now),
      timeEpoch: now.getTime(),
    },
    isBase64Encoded: false,
  };
  if (cookies.length > 0) event.cookies = cookies;
  if (queryStringParameters) event.queryStringParameters = queryStringParameters;
  if (request.body.length > 0) {
    const text = isText(headers['content-type']) ? decodeUtf8(request.body) : undefined;
    event.body = text ?? request.body.toString('base64');
    event.isBase64Encoded = text === undefined;
  }
  return event;
}

/** The route that matches, as API Gateway picks it: an exact method before `ANY`, then `$default`. */
export function matchRoute(routes: readonly Route[], method: string, path: string): Route | undefined {
  const upper = method.toUpperCase();
  return (
    routes.find((route) => route.path === path && route.method.toUpperCase() === upper) ??
    routes.find((route) => route.path === path && route.method.toUpperCase() === 'ANY') ??
    routes.find((route) => route.path === '$default')
  );
}

export function routeKey(route: Route): string {
  return route.path === '$default' ? '$default' : `${route.method.toUpperCase()} ${route.path}`;
}

/**
 * Writes a Lambda's answer the way API Gateway does for payload format 2.0: a structured result as
 * given (base64 bodies decoded, `cookies` as Set-Cookie); anything else as a 200 JSON document.
 */
export function writeApiGatewayResult(
  res: ServerResponse,
  result: APIGatewayProxyResultV2 | undefined,
): void {
  const structured = toStructured(result);
  res.statusCode = structured.statusCode ?? 200;
  for (const [name, value] of Object.entries(structured.headers ?? {})) res.setHeader(name, String(value));
  if (structured.cookies && structured.cookies.length > 0) res.setHeader('set-cookie', structured.cookies);
  const body =
    structured.body === undefined
      ? Buffer.alloc(0)
      : Buffer.from(structured.body, structured.isBase64Encoded ? 'base64' : 'utf8');
  res.setHeader('content-length', body.length);
  res.end(body);
}

/** API Gateway's own answer when the integration fails: 500 `{"message":"Internal Server Error"}`. */
export function writeApiGatewayError(res: ServerResponse, statusCode: number, message: string): void {
  const body = JSON.stringify({ message });
  res.writeHead(statusCode, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

function toStructured(result: APIGatewayProxyResultV2 | undefined): APIGatewayProxyStructuredResultV2 {
  if (typeof result === 'object' && result !== null && 'statusCode' in result) {
    return result as APIGatewayProxyStructuredResultV2;
  }
  const body = typeof result === 'string' ? result : JSON.stringify(result ?? null);
  return { statusCode: 200, headers: { 'content-type': 'application/json' }, body };
}

export type ProxyHandler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyResultV2 | undefined>;

/**
 * Reads the whole request body, up to `limit` bytes. Past the limit it stops reading (the request is
 * paused, nothing more is buffered) and resolves `undefined`, so the caller can answer 413 at once.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.pause();
        chunks.length = 0;
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks, size)));
    req.once('error', reject);
  });
}

function parseQuery(raw: string): Record<string, string> | undefined {
  if (raw === '') return undefined;
  const parameters = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(raw)) joinValue(parameters, name, value);
  return parameters.size > 0 ? Object.fromEntries(parameters) : undefined;
}

/** Adds a value under `name`, after the earlier ones with a comma, as API Gateway joins repeats. */
function joinValue(values: Map<string, string>, name: string, value: string): void {
  const earlier = values.get(name);
  values.set(name, earlier === undefined ? value : `${earlier},${value}`);
}

function isText(contentType: string | undefined): boolean {
  return contentType !== undefined && TEXT_TYPES.test(contentType.trim());
}

function decodeUtf8(bytes: Buffer): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

function safeDecodePath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `12/Mar/2020:19:03:58 +0000`, the format of `requestContext.time`. */
function apiGatewayTime(date: Date): string {
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${pad(date.getUTCDate())}/${MONTHS[date.getUTCMonth()]}/${date.getUTCFullYear()}:${pad(
    date.getUTCHours(),
  )}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`;
}
