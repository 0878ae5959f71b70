/** The outcomes the dashboard charts, in the order it stacks them. */
import { METRIC } from '../lib/metrics.js';
export const OUTCOMES = ['applied', 'late', 'duplicate', 'parked', 'refused'] as const;
export type ChartOutcome = (typeof OUTCOMES)[number];

/**
 * The metric each outcome is counted by: the names the functions already emit (ingest: `Parked`,
 * `Refused`; row and state workers: `EventsApplied`, `EventsLate`, `EventsDuplicate`), so the local chart and
 * CloudWatch on AWS count the same things.
 */
export const OUTCOME_METRICS: Readonly<Record<string, ChartOutcome>> = {
  [METRIC.EventsApplied]: 'applied',
  [METRIC.EventsLate]: 'late',
  [METRIC.EventsDuplicate]: 'duplicate',
  [METRIC.Parked]: 'parked',
  [METRIC.Refused]: 'refused',
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
