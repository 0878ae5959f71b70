import type { Decision, RejectReason } from './decision.js';

/** What the ingest answers: status, headers and body, as any HTTP transport sends them. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  405: 'Method Not Allowed',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** An RFC 9457 problem document. `detail` never carries a secret, a signature or body values. */
export function problem(status: number, reason: string, detail: string): string {
  return JSON.stringify({
    type: `urn:crm-webhook-receiver:problem:${reason}`,
    title: TITLES[status] ?? 'Error',
    status,
    detail,
  });
}

/** A problem+json answer; 405 names the allowed method, 503 asks to retry in a second. */
export function problemAnswer(status: number, reason: RejectReason | string, detail: string): Answer {
  const headers: Record<string, string> = { 'content-type': 'application/problem+json' };
  if (status === 405) headers.allow = 'POST';
  if (status === 503) headers['retry-after'] = '1';
  return { status, headers, body: problem(status, reason, detail) };
}

/** The 503 the sender retries: the delivery could not be queued (or processed) now. */
export function unavailableAnswer(): Answer {
  return problemAnswer(503, 'queue-unavailable', 'the delivery could not be queued; retry later');
}

/** 200 for a delivery on its queue, parked, or the registration check. */
export function okAnswer(decision: Exclude<Decision, { kind: 'reject' }>): Answer {
  const body =
    decision.kind === 'test'
      ? { status: 'test-acknowledged' }
      : decision.kind === 'accept'
        ? { status: 'accepted', eventId: decision.message.deduplicationId, queue: decision.message.queue }
        : { status: 'parked', eventId: decision.log.eventId, reason: decision.reason };
  return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}
