import type { ErasureReport, ErasureTarget } from '../lib/erasure/request.js';
import type { ReplayFilter, ReplayReport } from '../lib/ingest/index.js';
import type { RedriveResult } from '../lib/queue/sqs-move-back.js';
import type { ReconcileRequest } from '../lib/reconcile/request.js';
import type { StorePlace } from '../lib/store/event-lookup.js';
import type { StoreReader } from '../lib/store/types.js';
import type { DeadLetterView, DeliveryView, FailureView } from '../local/bus/views.js';
import type { ChartOutcome, DeliveryEntry, MinuteCounts } from './activity.js';
import type { MessageView, ParkedView, QueueView } from './views.js';

/** What the page says about where its data comes from (`GET /source`). */
export interface SourceInfo {
  kind: 'local' | 'aws';
  /** "local runtime", "stage prod (eu-west-1)". */
  name: string;
  /** True where the ingest's answers can be followed (locally only). */
  live: boolean;
  /** Parked deliveries are read only when asked: on AWS each look is a receive. */
  parkedOnRequest: boolean;
  /** What a look at the parked queue costs, shown on the page. */
  parkedNote: string;
  /** What a replay of the parked deliveries decides with, shown before it is confirmed. */
  replayNote: string;
  /** Where the subscriptions' counts come from and what this source cannot show. */
  subscriptionsNote: string;
}

/**
 * One subscription as the Subscriptions view shows it (`GET /subscriptions`). Locally the bus sees
 * every delivery; on AWS EventBridge keeps no record of them, so `inFlight` is null and the lists are
 * absent.
 */
export interface SubscriptionStatus {
  name: string;
  /** Its EventBridge event pattern. */
  pattern: Record<string, unknown>;
  target: string;
  matched: number;
  delivered: number;
  inFlight: number | null;
  /** Events that exhausted their retries (to the DLQ). */
  failed: number;
  /** Messages in its dead-letter queue now. */
  dlqDepth: number;
  recent?: DeliveryView[];
  failures?: FailureView[];
  dlq?: DeadLetterView[];
}

export interface OutcomeSeries {
  outcomes: readonly ChartOutcome[];
  perMinute: MinuteCounts[];
}

/** A place an event was found, with what that place holds of it: the tables, or a queue. */
export type EventPlace =
  | StorePlace
  | { where: 'queue' | 'dlq' | 'parked'; queue: string; message: MessageView };

export interface FoundEvent {
  eventId: string;
  /** How the places were searched, shown on the page. */
  searched: string;
  places: EventPlace[];
}

/** Reconciliation as a source offers it: whether a gap can be recovered, and how to ask. */
export interface Reconciliation {
  /** False without CRM_API_URL: nothing can fetch a gap's changes back. */
  enabled: boolean;
  /** One line for `GET /gaps` and the page: where rows are fetched from, or why a gap cannot be recovered. */
  note: string;
  /** Queues a request on the reconcile queue (lib/reconcile/request.ts). */
  enqueue(request: ReconcileRequest): Promise<void>;
}

/**
 * Everything the dashboard's endpoints (page/api.js) read or do, implemented once for the local
 * runtime (emulators, in-process taps) and once for a deployed stage (AWS clients).
 */
export interface DashboardSource {
  info: SourceInfo;
  /** Rows, their history, webhooks and gaps. */
  store: StoreReader;
  queues(): Promise<QueueView[]>;
  outcomes(): Promise<OutcomeSeries>;
  deliveries(after: number): Promise<DeliveryEntry[]>;
  findEvent(eventId: string): Promise<FoundEvent>;
  parked(limit: number): Promise<ParkedView[]>;
  /** Each subscription's pattern, target, counts and DLQ. */
  subscriptions(): Promise<SubscriptionStatus[]>;
  /** Moves a queue's dead-letter messages back to it; `queue` is a key (`webhookState`). */
  redrive(queue: string): Promise<RedriveResult>;
  /** Decides the parked deliveries again with today's code and settings; sends what routes now. */
  replayParked(request: ReplayFilter): Promise<ReplayReport>;
  /** Reconciliation, where this source can ask for one (the local runtime); absent: `POST /reconcile` is 404. */
  reconciliation?: Reconciliation;
  /** Erases a row's or a tenant's personal data on request (lib/erasure/request.ts); absent: `POST /erase` is 404. */
  erase?: (target: ErasureTarget) => Promise<ErasureReport>;
}
