import { Metrics } from '@aws-lambda-powertools/metrics';
import {
  type DeliveryEntry,
  type DeliveryFeed,
  OUTCOME_METRICS,
  type OutcomeCounter,
} from '../../dashboard/activity.js';
import type { ProxyHandler } from './api-gateway.js';

/**
 * Feeds `counter` from the metrics the functions emit, by wrapping `Metrics.prototype.addMetric` of
 * this process (the local runtime runs every function in-process; metrics are not published
 * locally). Nothing in `functions/` or `lib/` changes. Returns the undo.
 */
export function tapMetrics(counter: OutcomeCounter): () => void {
  const original = Metrics.prototype.addMetric;
  Metrics.prototype.addMetric = function (this: Metrics, ...args: Parameters<Metrics['addMetric']>) {
    const outcome = OUTCOME_METRICS[args[0]];
    if (outcome !== undefined) counter.add(outcome, args[2]);
    return original.apply(this, args);
  };
  return () => {
    Metrics.prototype.addMetric = original;
  };
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
