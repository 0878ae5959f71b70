/** What one HTTP exchange with the CRM answered: status, headers, the body as text (bounded). */
export interface CrmResponse {
  status: number;
  headers: Headers;
  text: string;
}

/** Why an exchange got no usable answer: no answer in time, a broken connection, a body too large. */
export class ExchangeError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ExchangeError';
  }
}

export interface ExchangeOptions {
  method: string;
  headers: Record<string, string>;
  body?: string | undefined;
  /** The whole exchange, body included, is aborted after this long. */
  timeoutMs: number;
  maxBodyBytes: number;
  fetch: typeof fetch;
  /** Aborts the exchange early (a runtime that stops). */
  signal?: AbortSignal | undefined;
}

/**
 * One request with Node's fetch: aborted after `timeoutMs` (a peer that never answers, or answers
 * forever), the body read up to `maxBodyBytes` and no further. Throws ExchangeError, naming the
 * method and path only (never the query, which may carry a continuation, nor a header).
 */
export async function exchange(url: URL, options: ExchangeOptions): Promise<CrmResponse> {
  const what = `${options.method} ${url.pathname}`;
  try {
    const response = await options.fetch(url, {
      method: options.method,
      headers: options.headers,
      body: options.body,
      redirect: 'manual',
      signal: options.signal
        ? AbortSignal.any([AbortSignal.timeout(options.timeoutMs), options.signal])
        : AbortSignal.timeout(options.timeoutMs),
    });
    return {
      status: response.status,
      headers: response.headers,
      text: await boundedText(response, options.maxBodyBytes),
    };
  } catch (cause) {
    if (cause instanceof ExchangeError) throw new ExchangeError(`${what}: ${cause.message}`, { cause });
    const reason =
      (cause as Error).name === 'TimeoutError'
        ? `no answer within ${options.timeoutMs} ms`
        : `no answer (${(cause as Error).message})`;
    throw new ExchangeError(`${what}: ${reason}`, { cause });
  }
}

async function boundedText(response: Response, maxBytes: number): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (declared > maxBytes) {
    await response.body?.cancel();
    throw new ExchangeError(`the answer is over ${maxBytes} bytes`);
  }
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      await response.body.cancel().catch(() => undefined);
      throw new ExchangeError(`the answer is over ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Retry-After as milliseconds: delta seconds or an HTTP date (relative to `now`); undefined when
 * absent or unreadable.
 */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

/** The answer's JSON, or an error naming the call (not the body, which may hold row data). */
export function jsonOf(response: CrmResponse, what: string): unknown {
  try {
    return JSON.parse(response.text) as unknown;
  } catch {
    throw new ExchangeError(`${what}: the answer (HTTP ${response.status}) is not JSON`);
  }
}
