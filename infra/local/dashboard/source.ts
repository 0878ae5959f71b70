import type { StoreReader } from '../../../lib/store/types.js';
import type { ParkedView, QueueView } from '../views.js';
import type { ChartOutcome, DeliveryEntry, MinuteCounts } from './activity.js';
import type { FoundEvent } from './find-event.js';

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
}

export interface OutcomeSeries {
  outcomes: readonly ChartOutcome[];
  perMinute: MinuteCounts[];
}

export interface RedriveResult {
  queue: string;
  /** The move task's status (COMPLETED, RUNNING, FAILED, ...). */
  status: string;
  moved: number;
  failureReason?: string;
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
  /** Moves a queue's dead-letter messages back to it; `queue` is a key (`webhookState`). */
  redrive(queue: string): Promise<RedriveResult>;
}
