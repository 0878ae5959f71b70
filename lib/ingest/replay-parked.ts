import { compileWildcard } from '../bus/pattern/wildcard.js';
import type { OutboundMessage, ParkedSource, QueueSender, ReceivedParked } from '../queue/port.js';
import { parkedCopy, replayDecision } from './replay.js';
import type { ReplayLock } from './replay-lock.js';
import type { DeliveryPolicy } from './request.js';

/** Which parked deliveries a replay decides (`POST /parked/replay?event=&max=`, `ops replay-parked`). */
export interface ReplayFilter {
  /**
   * Only messages whose event (as the headers named it) matches: an EventBridge wildcard, `*` any run
   * of characters (`person.*`), `\*` and `\\` a literal `*` and `\`.
   */
  eventPattern?: string | undefined;
  /** At most this many messages decided. */
  max?: number | undefined;
}

export interface ReplayOptions extends ReplayFilter {
  source: ParkedSource;
  sender: QueueSender;
  policy: DeliveryPolicy;
  /** One replay of this parked queue at a time; none: nothing keeps another run out. */
  lock?: ReplayLock;
  now?: () => Date;
}

export interface ReplayReport {
  /** Sent to their queue and removed from the parked queue. */
  replayed: number;
  /** Still not routable: parked again with today's reason. */
  kept: number;
  /** Today's reasons of the kept ones, with their counts. */
  keptBy: Record<string, number>;
  /**
   * False when the run stopped at its time budget (half of {@link ParkedSource.hiddenForMs}) with
   * messages perhaps left: run it again to go on.
   */
  complete: boolean;
}

/**
 * Replays the parked queue: each message is decided again ({@link replayDecision}); one that now
 * routes is sent to its queue (deduplicated by its EventId), one that does not is parked again with
 * its reason brought up to date, and one the filter leaves out (another event, over `max`) is put
 * back exactly as it was ({@link parkedCopy}), so that being received spends none of its receives.
 *
 * A message is removed only after the queue it went to acknowledged its successor, and a copy in the
 * parked queue is deduplicated by the id of the message it replaces ({@link copyId}): a send that FIFO
 * deduplicates means a copy of that very message is already queued, whoever sent it. So whatever runs
 * beside it (another replay, a crash half-way), no message is removed without its successor queued;
 * the worst is a duplicate, which the EventId and the history absorb. The run's own copies are held
 * until it ends, then made visible again. The filter is checked before anything is received.
 *
 * A run stops receiving after half the time a received message stays hidden (`complete: false`): a
 * held copy must never become visible while the run goes on, or it would be received again and spend
 * its receives towards the parked queue's DLQ (5).
 */
export async function replayParked(options: ReplayOptions): Promise<ReplayReport> {
  const { policy } = options;
  const max = options.max ?? Number.POSITIVE_INFINITY;
  const matches = replayEventMatcher(options.eventPattern);
  const replayedAt = (options.now ?? (() => new Date()))();
  const report: ReplayReport = { replayed: 0, kept: 0, keptBy: {}, complete: true };
  const decided = () => report.replayed + report.kept;
  const { complete } = await sweepParked(
    { ...options, now: options.now ?? (() => new Date()) },
    (message) => {
      const outcome =
        decided() < max && matches(message.attributes.event ?? '')
          ? replayDecision(message, policy, replayedAt)
          : undefined;
      if (outcome?.kind === 'replay') report.replayed++;
      else if (outcome?.kind === 'keep') {
        report.kept++;
        report.keptBy[outcome.reason] = (report.keptBy[outcome.reason] ?? 0) + 1;
      }
      return outcome?.message ?? parkedCopy(message);
    },
    () => max - decided(),
  );
  report.complete = complete;
  return report;
}

/** What a sweep of a parked-like FIFO queue needs: the queue, where successors go, the lock. */
export interface SweepOptions {
  source: ParkedSource;
  /** Where successors go; a successor for `parked` goes back to the queue swept. */
  sender: QueueSender;
  lock?: ReplayLock | undefined;
  now?: () => Date;
}

/**
 * Receives every message of a FIFO queue once, the way {@link replayParked} does (see there for why
 * nothing is lost whatever runs beside it): `replace` gives each message's successor, sent before the
 * message is removed, or `undefined` to remove it with none (an erasure). `remaining` bounds how many
 * more are received. `complete` is false when the run stopped at its time budget.
 */
export async function sweepParked(
  options: SweepOptions,
  replace: (message: ReceivedParked) => OutboundMessage | undefined,
  remaining: () => number = () => Number.POSITIVE_INFINITY,
): Promise<{ complete: boolean }> {
  const { source, sender, lock } = options;
  const now = options.now ?? (() => new Date());
  const stopAt = now().getTime() + source.hiddenForMs / 2;
  let complete = true;
  /** Deduplication ids of the copies this run parked; the messages whose successor it queued. */
  const copies = new Set<string>();
  const replaced = new Set<string>();
  /** This run's own copies, received again: hidden until it ends. */
  const held = new Map<string, ReceivedParked>();
  /** Received and not yet handled: made visible again if the run fails. */
  let inHand: ReceivedParked[] = [];

  await lock?.acquire();
  try {
    while (remaining() > 0) {
      if (now().getTime() >= stopAt) {
        complete = false;
        break;
      }
      await lock?.renew();
      inHand = await source.receive(Math.min(10, remaining()));
      if (inHand.length === 0) break;
      while (inHand.length > 0) {
        const message = inHand[0]!;
        if (copies.has(message.deduplicationId)) held.set(message.messageId, message);
        else {
          // One received again after its successor was queued (its removal had not taken effect) is only removed.
          if (!replaced.has(message.messageId)) {
            const successor = replace(message);
            if (successor?.queue === 'parked') copies.add(successor.deduplicationId);
            if (successor !== undefined) await sender.send(successor);
            replaced.add(message.messageId);
          }
          await source.remove(message);
        }
        inHand.shift();
      }
    }
  } finally {
    // Best effort: one not released reappears when its visibility timeout ends.
    await Promise.allSettled([...held.values(), ...inHand].map((message) => source.release(message)));
    await lock?.release();
  }
  return { complete };
}

/**
 * The replay's event filter, compiled by the subscriptions' wildcard matcher (linear: no regular
 * expression, so no pattern makes it backtrack); no pattern matches everything. Throws PatternError
 * (lib/bus/pattern/errors.ts) for a pattern the matcher refuses (`**`, a stray backslash).
 *
 * @example replayEventMatcher('person.*')('person.created') === true
 */
export function replayEventMatcher(pattern: string | undefined): (event: string) => boolean {
  if (pattern === undefined || pattern === '') return () => true;
  return compileWildcard(pattern, 'event');
}
