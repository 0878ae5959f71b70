import { Agent } from 'node:http';
import { httpRequest, type PostOptions } from './http-client.js';
import { buildSampleDelivery, signBody } from './samples.js';

/**
 * A sender that behaves like the CRM's (../shared/spec/sender-behaviour.md): only 200 counts as
 * delivered; each event is tried 3 times, 1 s and 4 s apart, later attempts carrying `X-<Prefix>-Retry`;
 * after the third failure it is discarded; failures are counted per webhook, consecutively, and the
 * 9th in a row (or any 410 Gone) stops the webhook, after which nothing more is sent.
 */
export interface RealisticSender {
  deliver(body: string): Promise<DeliveryOutcome>;
  readonly stats: SenderStats;
  readonly stopped: boolean;
  close(): void;
}

export type DeliveryOutcome = 'accepted' | 'discarded' | 'not-sent';

export interface SenderStats {
  /** Deliveries attempted at least once. */
  sent: number;
  accepted: number;
  /** Attempts after the first (the retries). */
  retried: number;
  discarded: number;
  /** Deliveries never attempted because the webhook had stopped. */
  notSent: number;
  /** Answers other than 200, by status (0 for no answer). */
  failures: Record<string, number>;
  /** Milliseconds of every POST, in the order they finished. */
  latencies: number[];
  stoppedBy?: 'too-many-errors' | 'gone';
}

export interface SenderOptions {
  url: string;
  secret?: string;
  prefix?: string;
  concurrency?: number;
  /** Pauses before the second and third attempts; the real sender's are 1 s and 4 s. */
  retryDelaysMs?: readonly [number, number];
  /** Consecutive failed attempts after which the webhook stops (9). */
  maxConsecutiveFailures?: number;
  timeoutMs?: number;
  /** Extra headers on every delivery (for example X-Receiver-Token). */
  headers?: Record<string, string>;
}

export function createRealisticSender(options: SenderOptions): RealisticSender {
  const prefix = options.prefix ?? 'X-SuperOffice';
  const policy = {
    prefix,
    retryDelaysMs: options.retryDelaysMs ?? REAL_RETRY_DELAYS_MS,
  };
  const maxFailures = options.maxConsecutiveFailures ?? MAX_CONSECUTIVE_FAILURES;
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency ?? 50 });
  const stats: SenderStats = {
    sent: 0,
    accepted: 0,
    retried: 0,
    discarded: 0,
    notSent: 0,
    failures: {},
    latencies: [],
  };
  let consecutiveFailures = 0;
  const target: CycleTarget = {
    get active() {
      return stats.stoppedBy === undefined;
    },
    attempted(status, retry) {
      if (retry > 0) stats.retried++;
      if (status !== 200) stats.failures[status] = (stats.failures[status] ?? 0) + 1;
      const counted = countAttempt(consecutiveFailures, status, maxFailures);
      consecutiveFailures = counted.consecutive;
      if (counted.stop) stats.stoppedBy ??= counted.stop;
    },
  };
  const post = (headers: Record<string, string>, body: string) =>
    postDelivery(options.url, headers, body, { agent, timeoutMs: options.timeoutMs }, (ms) =>
      stats.latencies.push(ms),
    );

  return {
    stats,
    get stopped() {
      return stats.stoppedBy !== undefined;
    },
    async deliver(body) {
      if (!target.active) {
        stats.notSent++;
        return 'not-sent';
      }
      stats.sent++;
      const delivery = buildSampleDelivery(JSON.parse(body) as Record<string, unknown>, {
        secret: options.secret,
        prefix,
      });
      // The headers of the delivery table; the signature over exactly the bytes sent.
      const headers = { ...delivery.headers, ...options.headers };
      if (options.secret !== undefined && delivery.headers[`${prefix}-Signature`] !== undefined) {
        headers[`${prefix}-Signature`] = signBody(body, options.secret);
      }
      const outcome = await deliveryCycle((h) => post(h, body), headers, target, policy);
      if (outcome === 'accepted') stats.accepted++;
      else stats.discarded++;
      return outcome;
    },
    close() {
      agent.destroy();
    },
  };
}

/** The real sender's pauses before the second and third attempts (sender-behaviour.md). */
export const REAL_RETRY_DELAYS_MS: readonly [number, number] = [1000, 4000];

/** Consecutive failed attempts after which the real sender sets a webhook to TooManyErrors. */
export const MAX_CONSECUTIVE_FAILURES = 9;

/** The webhook's side of one delivery cycle: whether it still sends, and what each attempt does to it. */
export interface CycleTarget {
  readonly active: boolean;
  /** After every attempt: its status (0 for no answer) and its retry number (0 for the first). */
  attempted(status: number, retry: number): void;
}

export interface CyclePolicy {
  prefix: string;
  retryDelaysMs: readonly [number, number];
}

/**
 * One event's delivery cycle, as the CRM runs it: a first attempt, then (while the webhook is still
 * active) a second one `retryDelaysMs[0]` after the first failure and a third `retryDelaysMs[1]` after
 * the second, each retry carrying `<prefix>-Retry: <n>`; only 200 counts. `'discarded'` after the third
 * failure, or when the webhook stopped in between; `'not-sent'` when it was not active to begin with.
 */
export async function deliveryCycle(
  post: (headers: Record<string, string>) => Promise<number>,
  headers: Record<string, string>,
  target: CycleTarget,
  policy: CyclePolicy,
): Promise<DeliveryOutcome> {
  if (!target.active) return 'not-sent';
  const sent = { ...headers };
  for (let retry = 0; retry < 3; retry++) {
    if (retry > 0) {
      await new Promise((resolve) => setTimeout(resolve, policy.retryDelaysMs[retry - 1]));
      if (!target.active) return 'discarded';
      sent[`${policy.prefix}-Retry`] = String(retry);
    }
    const status = await post(sent);
    target.attempted(status, retry);
    if (status === 200) return 'accepted';
    if (!target.active) return 'discarded';
  }
  return 'discarded';
}

/**
 * A webhook's consecutive-failure counter after an attempt answered `status` (0: no answer): reset by
 * a 200, else one more; `stop` says why the webhook stops now (410 Gone at once, or the
 * `max`th failure in a row).
 */
export function countAttempt(
  consecutive: number,
  status: number,
  max: number,
): { consecutive: number; stop?: 'gone' | 'too-many-errors' } {
  if (status === 200) return { consecutive: 0 };
  const next = consecutive + 1;
  if (status === 410) return { consecutive: next, stop: 'gone' };
  return next >= max ? { consecutive: next, stop: 'too-many-errors' } : { consecutive: next };
}

/** One POST of a delivery: the answer's status, or 0 when there was none (refused, reset, timed out). */
export async function postDelivery(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: PostOptions = {},
  onAnswer?: (ms: number) => void,
): Promise<number> {
  try {
    const answer = await httpRequest('POST', url, headers, body, {
      ...options,
      timeoutMs: options.timeoutMs ?? 10_000,
    });
    onAnswer?.(answer.ms);
    return answer.status;
  } catch {
    return 0;
  }
}
