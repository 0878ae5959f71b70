import type { SQSClient } from '@aws-sdk/client-sqs';
import type { EventPublisher } from '../../lib/bus/publisher.js';
import type { Subscription } from '../../lib/bus/subscriptions.js';
import type { SubscriptionView } from './views.js';

/** What the local bus (local-bus.ts, startLocalBus) is started with. */
export interface LocalBusOptions {
  subscriptions: readonly Subscription[];
  /** Where the deliveries not yet done and the dead letters are journaled (DATA_DIR/bus-journal.ndjson). */
  journalPath: string;
  /** The SQS emulator's client; needed when a subscription has a `queue` target. */
  sqs?: SQSClient;
  /** Queue names are `<service>-<stage>-<queue>`; default crm-webhook-receiver and local. */
  service?: string;
  stage?: string;
  account?: string;
  region?: string;
  /** Where `auth.env` is read; default process.env. */
  env?: Record<string, string | undefined>;
  /** Delay before retry n: about baseMs × 2^(n-1), capped at maxMs, with jitter. Default 1 s, 60 s. */
  backoff?: { baseMs: number; maxMs: number };
  /** How long a POST may take, as for an API destination: default 5 s. */
  timeoutMs?: number;
  /** Deliveries under way at once per target (each holds a connection); default 16. */
  maxInFlight?: number;
  /** How many recent deliveries and failures each view keeps (default 50); the DLQ keeps 10,000. */
  keep?: number;
}

/** The local bus as the runtime uses it: the workers publish to it, the admin API shows and erases. */
export interface LocalBus extends EventPublisher {
  /** Lines to print at start: subscriptions not delivered locally (lambda targets), deliveries resumed. */
  readonly notices: string[];
  view(): SubscriptionView[];
  /** Resolves when no delivery is left to do (retries included), or once the bus is closed. */
  idle(): Promise<void>;
  /** Stops: what is not delivered yet stays journaled for the next start. */
  close(): Promise<void>;
  /**
   * Drops the dead letters and the deliveries still to do whose event `carries` names (an erasure on
   * request, local/admin/erase.ts), from the journal and the views; a delivery under way is not retried or
   * dead-lettered afterwards. Returns how many it dropped.
   */
  erase(carries: (eventText: string) => boolean): number;
}
