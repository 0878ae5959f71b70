import {
  type DeliveryEntry,
  type DeliveryFeed,
  OUTCOME_METRICS,
  type OutcomeCounter,
} from '../../dashboard/activity.js';
import { observeMetrics } from '../../lib/function-metrics.js';
import type { ProxyHandler } from './api-gateway.js';

/**
 * Feeds `counter` from the metrics the functions emit (lib/function-metrics.ts: the local runtime runs
 * every function in-process; metrics are not published locally). Returns the undo.
 */
export function tapMetrics(counter: OutcomeCounter): () => void {
  return observeMetrics((name, value) => {
    const outcome = OUTCOME_METRICS[name];
    if (outcome !== undefined) counter.add(outcome, value);
  });
}

/** Wraps the ingest handler so each answer lands in `feed`; the answer itself is untouched. */
export function watchIngest(handler: ProxyHandler, feed: DeliveryFeed): ProxyHandler {
  return async (event, context) => {
    const result = await handler(event, context);
    const headers = event.headers ?? {};
    const header = (suffix: string) =>
      Object.entries(headers).find(([name]) => name.toLowerCase().endsWith(suffix))?.[1];
    const status = typeof result === 'object' ? (result.statusCode ?? 200) : 200;
    const answer = typeof result === 'object' && typeof result.body === 'string' ? parse(result.body) : {};
    feed.push({
      receivedAt: new Date(event.requestContext.timeEpoch).toISOString(),
      event: header('-event'),
      eventId: header('-eventid'),
      status,
      ...describe(status, answer),
    });
    return result;
  };
}

function describe(
  status: number,
  answer: Record<string, unknown>,
): Pick<DeliveryEntry, 'answer' | 'queue' | 'reason'> {
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  if (status === 200 && answer.status === 'accepted')
    return { answer: 'accepted', queue: text(answer.queue) };
  if (status === 200 && answer.status === 'parked') return { answer: 'parked', reason: text(answer.reason) };
  if (status === 200) return { answer: 'registration-test' };
  // A problem document: its type ends in the reason (urn:crm-webhook-receiver:problem:<reason>).
  const reason = text(answer.type)?.split(':').pop();
  return { answer: status === 503 ? 'unavailable' : 'refused', ...(reason && { reason }) };
}

function parse(body: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
