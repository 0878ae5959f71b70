import type { ServerResponse } from 'node:http';
import { problem } from '../../lib/ingest/index.js';

/**
 * Answers with an RFC 9457 problem document (the ingest's own format), unless an answer has already
 * started, in which case the connection is closed: a half-written answer must not look complete.
 */
export function writeProblem(
  res: ServerResponse,
  status: number,
  reason: string,
  detail: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = problem(status, reason, detail);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}
