import { Agent } from 'node:http';
import { httpRequest } from './http-client.js';
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
  const delays = options.retryDelaysMs ?? [1000, 4000];
  const maxFailures = options.maxConsecutiveFailures ?? 9;
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

  const attempt = async (headers: Record<string, string>, body: string): Promise<number> => {
    try {
      const answer = await httpRequest('POST', options.url, headers, body, {
        agent,
        timeoutMs: options.timeoutMs ?? 10_000,
      });
      stats.latencies.push(answer.ms);
      return answer.status;
    } catch {
      return 0;
    }
  };

  return {
    stats,
    get stopped() {
      return stats.stoppedBy !== undefined;
    },
    async deliver(body) {
      if (stats.stoppedBy) {
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
      for (let retry = 0; retry < 3; retry++) {
        if (retry > 0) {
          if (stats.stoppedBy) return 'discarded';
          await new Promise((resolve) => setTimeout(resolve, delays[retry - 1]));
          stats.retried++;
          headers[`${prefix}-Retry`] = String(retry);
        }
        const status = await attempt(headers, body);
        if (status === 200) {
          consecutiveFailures = 0;
          stats.accepted++;
          return 'accepted';
        }
        stats.failures[status] = (stats.failures[status] ?? 0) + 1;
        consecutiveFailures++;
        if (status === 410) stats.stoppedBy ??= 'gone';
        if (consecutiveFailures >= maxFailures) stats.stoppedBy ??= 'too-many-errors';
        if (stats.stoppedBy) break;
      }
      stats.discarded++;
      return 'discarded';
    },
    close() {
      agent.destroy();
    },
  };
}
