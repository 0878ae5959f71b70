import type { IncomingMessage, ServerResponse } from 'node:http';
import { CrmError } from './errors.js';

/** A request as the simulator's routes see it: method, path, query, headers, parsed JSON body. */
export interface CrmRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: unknown;
  /** The address requests reach this server at (`http://127.0.0.1:3100`), for links. */
  origin: string;
}

/** What a route answers: a status, a JSON body (none for 304), extra headers. */
export interface CrmAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export const ok = (body: unknown, headers?: Record<string, string>): CrmAnswer => ({
  status: 200,
  body,
  headers,
});

/** The answer for anything the simulator does not serve: 501 naming the method and path. */
export function notImplemented(method: string, path: string): CrmAnswer {
  return { status: 501, body: { Error: `${method} ${path} is not implemented by the CRM simulator` } };
}

const MAX_BODY_BYTES = 1_048_576;

/** The request body parsed as JSON (undefined when empty); a one-line 400 for anything else. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new CrmError(`the request body is over ${MAX_BODY_BYTES} bytes`, 413);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new CrmError('the request body is not JSON');
  }
}

export function writeAnswer(res: ServerResponse, answer: CrmAnswer): void {
  const text = answer.body === undefined ? '' : `${JSON.stringify(answer.body, null, 2)}\n`;
  res.writeHead(answer.status, {
    ...(text ? { 'content-type': 'application/json; charset=utf-8' } : {}),
    'content-length': String(Buffer.byteLength(text)),
    ...answer.headers,
  });
  res.end(text);
}

/** The JSON object a route expects as its body, or a 400 naming what is accepted. */
export function objectBody(body: unknown, what: string): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new CrmError(`the body must be a JSON object: ${what}`);
  return body as Record<string, unknown>;
}
