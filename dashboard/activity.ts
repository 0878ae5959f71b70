import { Metrics } from '@aws-lambda-powertools/metrics';
import type { ProxyHandler } from '../local/api-gateway.js';

/** The outcomes the dashboard charts, in the order it stacks them. */
export const OUTCOMES = ['applied', 'late', 'duplicate', 'parked', 'refused'] as const;
export type ChartOutcome = (typeof OUTCOMES)[number];

/**
 * The metric each outcome is counted by: the names the functions already emit (ingest: `Parked`,
 * `Rejected`; row and state workers: `EventsApplied`, `EventsLate`, `EventsDuplicate`), so the local chart and
 * CloudWatch on AWS count the same things.
 */
export const OUTCOME_METRICS: Readonly<Record<string, ChartOutcome>> = {
  EventsApplied: 'applied',
  EventsLate: 'late',
  EventsDuplicate: 'duplicate',
  Parked: 'parked',
  Rejected: 'refused',
};

export type MinuteCounts = { minute: string } & Record<ChartOutcome, number>;

/** Events per minute by outcome, in memory, for the last hour. */
export interface OutcomeCounter {
  add(outcome: ChartOutcome, count?: number, at?: number): void;
  /** The last `minutes` minutes, oldest first, the current minute last; empty minutes count 0. */
  perMinute(now?: number, minutes?: number): MinuteCounts[];
}

const MINUTE = 60_000;
const KEEP_MINUTES = 60;

export function createOutcomeCounter(): OutcomeCounter {
  const buckets = new Map<number, Record<ChartOutcome, number>>();
  const empty = (): Record<ChartOutcome, number> =>
    Object.fromEntries(OUTCOMES.map((outcome) => [outcome, 0])) as Record<ChartOutcome, number>;
  return {
    add(outcome, count = 1, at = Date.now()) {
      const minute = Math.floor(at / MINUTE);
      const bucket = buckets.get(minute) ?? empty();
      bucket[outcome] += count;
      buckets.set(minute, bucket);
      for (const key of buckets.keys()) if (key <= minute - KEEP_MINUTES) buckets.delete(key);
    },
    perMinute(now = Date.now(), minutes = KEEP_MINUTES) {
      const last = Math.floor(now / MINUTE);
      return Array.from({ length: minutes }, (_, index) => {
        const minute = last - minutes + 1 + index;
        return { minute: new Date(minute * MINUTE).toISOString(), ...(buckets.get(minute) ?? empty()) };
      });
    },
  };
}

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

/** One delivery as the ingest answered it, for the dashboard's live list. */
export interface DeliveryEntry {
  /** Increasing number: the page asks for the entries after the last one it has. */
  seq: number;
  receivedAt: string;
  event: string | undefined;
  eventId: string | undefined;
  status: number;
  answer: 'accepted' | 'parked' | 'refused' | 'registration-test' | 'unavailable';
  queue?: string;
  reason?: string;
}

/** The last deliveries the ingest answered, newest last. */
export interface DeliveryFeed {
  push(entry: Omit<DeliveryEntry, 'seq'>): void;
  after(seq: number): DeliveryEntry[];
}

export function createDeliveryFeed(size = 200): DeliveryFeed {
  const entries: DeliveryEntry[] = [];
  let seq = 0;
  return {
    push(entry) {
      entries.push({ seq: ++seq, ...entry });
      if (entries.length > size) entries.splice(0, entries.length - size);
    },
    after: (after) => entries.filter((entry) => entry.seq > after),
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
