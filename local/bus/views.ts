import type { Subscription } from '../../lib/bus/subscriptions.js';

/** What the local bus (local/bus/local-bus.ts) shows of each subscription, for the admin API's `GET /subscriptions`. */

export interface DeliveryView {
  id: string;
  eventId: string | undefined;
  detailType: string;
  /** A receiver lifecycle event's context (it has no EventId): `receiver.reconcile.completed` of Cust1. */
  context?: string;
  attempts: number;
  at: string;
}

export interface FailureView {
  id: string;
  eventId: string | undefined;
  /** As {@link DeliveryView.context}. */
  context?: string;
  attempt: number;
  error: string;
  at: string;
}

export interface DeadLetterView extends DeliveryView {
  error: string;
  /** The event as it would have been sent (JSON text). */
  event: string;
}

/** One subscription's activity, for the admin API. Lists are newest first. */
export interface SubscriptionView {
  name: string;
  /** Its EventBridge event pattern, as in subscriptions.yml. */
  pattern: Record<string, unknown>;
  target: string;
  matched: number;
  delivered: number;
  /** Deliveries not yet done: under way, waiting for a retry, or waiting for their turn. */
  inFlight: number;
  recent: DeliveryView[];
  failures: FailureView[];
  dlq: DeadLetterView[];
  /** Dead letters dropped from the view because the DLQ holds 10,000 at most. */
  dlqDropped: number;
}

/** The most dead letters a view (and the journal) keeps per subscription. */
const DLQ_LIMIT = 10_000;

/** A subscription's view before anything happened. */
export function emptyView({ name, pattern, target }: Subscription): SubscriptionView {
  const description =
    target.kind === 'url' ? target.url : target.kind === 'queue' ? `queue ${target.queue}` : target.lambda;
  return {
    name,
    pattern,
    target: description,
    matched: 0,
    delivered: 0,
    inFlight: 0,
    recent: [],
    failures: [],
    dlq: [],
    dlqDropped: 0,
  };
}

/** Adds to a list of recent items, newest first, keeping `keep`. */
export function pushRecent<T>(list: T[], item: T, keep: number): void {
  list.unshift(item);
  if (list.length > keep) list.pop();
}

/** Newest first; beyond 10,000 the oldest leaves the view (and the journal, through `drop`). */
export function addDeadLetter(
  view: SubscriptionView,
  letter: DeadLetterView,
  drop: (letter: DeadLetterView) => void,
) {
  view.dlq.unshift(letter);
  if (view.dlq.length <= DLQ_LIMIT) return;
  drop(view.dlq.pop()!);
  view.dlqDropped++;
}
