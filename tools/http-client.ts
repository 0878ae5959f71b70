import { type Agent, request } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Milliseconds from the request to the last byte of the answer. */
  ms: number;
}

export interface PostOptions {
  agent?: Agent;
  timeoutMs?: number;
  /**
   * Resolve at the status line and drain the body unread (the answer's `body` is empty, `ms` the time
   * to the headers): a sender that ignores answers holds nothing of a peer that answers forever.
   */
  discardBody?: boolean;
}

/**
 * One HTTP request with node:http, or node:https for an `https:` URL (a deployed stage's WebhookUrl); keep-alive
 * through `agent`; network errors reject.
 */
export function httpRequest(
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: string | Buffer,
  options: PostOptions = {},
): Promise<HttpAnswer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = (new URL(url).protocol === 'https:' ? httpsRequest : request)(
      url,
      {
        method,
        headers:
          body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        agent: options.agent,
        timeout: options.timeoutMs ?? 10_000,
      },
      (res) => {
        if (options.discardBody) {
          res.resume();
          res.on('error', () => undefined);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: '',
            ms: performance.now() - started,
          });
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            ms: performance.now() - started,
          }),
        );
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`no answer from ${url} within ${options.timeoutMs ?? 10_000} ms`)),
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** GET a JSON document; rejects on a non-2xx answer. */
export async function getJson<T>(url: string, options: PostOptions = {}): Promise<T> {
  const answer = await httpRequest('GET', url, { accept: 'application/json' }, undefined, options);
  if (answer.status < 200 || answer.status > 299) {
    throw new Error(`GET ${url} answered ${answer.status}: ${answer.body.slice(0, 200)}`);
  }
  return JSON.parse(answer.body) as T;
}
