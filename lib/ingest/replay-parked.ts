import type { QueueSender } from '../queue/port.js';
import { type ParkedMessage, replayDecision } from './replay.js';
import type { DeliveryPolicy } from './request.js';

/** A parked message as received: what {@link replayDecision} reads, and the handle to delete it. */
export interface ReceivedParked extends ParkedMessage {
  messageId: string;
}

/** The parked queue, as the replay uses it (lib/queue/sqs-parked.ts for SQS). */
export interface ParkedSource {
  /** Up to `max` messages, hidden from other readers for the rest of the run. */
  receive(max: number): Promise<ReceivedParked[]>;
  remove(message: ReceivedParked): Promise<void>;
  /** Visible again at once. */
  release(message: ReceivedParked): Promise<void>;
}

/** Which parked deliveries a replay decides (`POST /parked/replay?event=&max=`, `ops replay-parked`). */
export interface ReplayFilter {
  /** Only messages whose event (as the headers named it) matches; `*` matches any run of characters. */
  eventPattern?: string | undefined;
  /** At most this many messages decided. */
  max?: number | undefined;
}

export interface ReplayOptions extends ReplayFilter {
  source: ParkedSource;
  sender: QueueSender;
  policy: DeliveryPolicy;
  now?: () => Date;
}

export interface ReplayReport {
  /** Sent to their queue and removed from the parked queue. */
  replayed: number;
  /** Still not routable: parked again with today's reason. */
  kept: number;
  /** Today's reasons of the kept ones, with their counts. */
  keptBy: Record<string, number>;
}

/**
 * Replays the parked queue: each message is decided again ({@link replayDecision}); one that now
 * routes is sent to its queue (deduplicated by its EventId), one that does not is parked again with
 * its reason brought up to date (so its group is not blocked and its receive count starts over). A
 * message is removed only after the queue it went to acknowledged the new one: a crash in between
 * leaves a duplicate, which FIFO deduplication and the history's idempotency absorb. Messages of
 * another event, over `max`, or parked again by this very run are released at the end.
 */
export async function replayParked(options: ReplayOptions): Promise<ReplayReport> {
  const { source, sender, policy } = options;
  const max = options.max ?? Number.POSITIVE_INFINITY;
  const matches = eventMatcher(options.eventPattern);
  const replayedAt = (options.now ?? (() => new Date()))();
  const stamp = replayedAt.toISOString();
  const report: ReplayReport = { replayed: 0, kept: 0, keptBy: {} };
  const held: ReceivedParked[] = [];
  const seen = new Set<string>();
  try {
    for (;;) {
      if (report.replayed + report.kept >= max) break;
      const batch = await source.receive(10);
      if (batch.length === 0) break;
      for (const message of batch) {
        const decided = report.replayed + report.kept;
        const ours = message.attributes.replayedAt === stamp || seen.has(message.messageId);
        if (ours || decided >= max || !matches(message.attributes.event ?? '')) {
          held.push(message);
          continue;
        }
        seen.add(message.messageId);
        const outcome = replayDecision(message, policy, replayedAt);
        await sender.send(outcome.message);
        await source.remove(message);
        if (outcome.kind === 'replay') report.replayed++;
        else {
          report.kept++;
          report.keptBy[outcome.reason] = (report.keptBy[outcome.reason] ?? 0) + 1;
        }
      }
    }
  } finally {
    await Promise.all(held.map((message) => source.release(message)));
  }
  return report;
}

/** `person.*` → matches `person.created`; no pattern matches everything. */
function eventMatcher(pattern: string | undefined): (event: string) => boolean {
  if (pattern === undefined || pattern === '') return () => true;
  const regex = new RegExp(
    `^${pattern
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
  return (event) => regex.test(event);
}
