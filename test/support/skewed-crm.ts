import { setTimeout as sleep } from 'node:timers/promises';
import { startServer } from './http-server.js';

export interface SkewedCrmOptions {
  /** The Date header's distance from the real time, ms (ahead: positive). */
  skewMs?: number;
  /** An archive answer is stamped (and sent) this long after the CRM read its rows. */
  stampDelayMs?: number;
  /** Runs once the CRM has read an archive page, before the answer is stamped (a live change meanwhile). */
  afterRead?: () => Promise<void>;
  /** Archive values that are numbers are answered as their text (`5` → `"5"`). */
  numbersAsText?: boolean;
  /** Each archive row answered as this makes of it (a field of the wrong shape). */
  rowAs?: (row: Record<string, unknown>) => Record<string, unknown>;
  /** An answer of the server's own to a request (then not forwarded); undefined: forwarded. */
  answer?: (url: URL) => { status: number; body: unknown } | undefined;
}

/** Headers of one hop, not forwarded (fetch sets its own). */
const HOP_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive']);

/**
 * A real HTTP server in front of the CRM simulator (`target`: its origin) that answers what the
 * simulator answers, with a Date header of its own: skewed, or stamped late after the archive read its
 * rows; optionally with the archive's numbers written as text. The tenant's state names this server as
 * its API's host. The options can change between calls.
 */
export async function startSkewedCrm(target: string, options: SkewedCrmOptions = {}) {
  let origin = target;
  let self = '';
  const server = await startServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const url = new URL(req.url ?? '/', origin);
      const own = options.answer?.(url);
      if (own !== undefined) {
        res.writeHead(own.status, { 'content-type': 'application/json', date: new Date().toUTCString() });
        res.end(JSON.stringify(own.body));
        return;
      }
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(
          (entry): entry is [string, string] => typeof entry[1] === 'string' && !HOP_HEADERS.has(entry[0]),
        ),
      );
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      const answer = await fetch(url, { method: req.method, headers, body });
      let text = await answer.text();
      // The tenant's state names the host of its API: this server's, as a server standing in for the
      // whole CRM answers (a client that follows the state's Api keeps calling through it).
      if (url.pathname.startsWith('/api/state/') && answer.status === 200) {
        const state = JSON.parse(text) as { Api?: unknown };
        if (typeof state.Api === 'string') {
          const api = new URL(state.Api);
          text = JSON.stringify({ ...state, Api: `${self}${api.pathname}` });
        }
      }
      if (url.pathname.toLowerCase().endsWith('/archive/dynamic') && answer.status === 200) {
        if (options.numbersAsText) text = JSON.stringify(numbersAsText(JSON.parse(text)));
        if (options.rowAs !== undefined) {
          const page = JSON.parse(text) as { value?: Array<Record<string, unknown>> };
          text = JSON.stringify({ ...page, value: page.value?.map(options.rowAs) });
        }
        await options.afterRead?.();
        if (options.stampDelayMs) await sleep(options.stampDelayMs);
      }
      res.writeHead(answer.status, {
        'content-type': answer.headers.get('content-type') ?? 'application/json',
        ...(answer.headers.get('retry-after') && { 'retry-after': answer.headers.get('retry-after')! }),
        date: new Date(Date.now() + (options.skewMs ?? 0)).toUTCString(),
      });
      res.end(text);
    });
  });
  self = server.url;
  return {
    ...server,
    options,
    /** Answers what the simulator at `to` (its origin) answers from now on. */
    retarget(to: string) {
      origin = to;
    },
    /** The API base to give the client, with `{ContextIdentifier}` in it. */
    apiUrl: `${server.url}/{ContextIdentifier}/api/v1`,
  };
}

/** An archive answer with every number in its rows as text (the key and paging untouched). */
function numbersAsText(page: { value?: Array<Record<string, unknown>> }) {
  return {
    ...page,
    value: page.value?.map((row) =>
      Object.fromEntries(
        Object.entries(row).map(([name, value]) => [
          name,
          typeof value === 'number' && name !== 'PrimaryKey' ? String(value) : value,
        ]),
      ),
    ),
  };
}
