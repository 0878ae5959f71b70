import type { ReactivatePolicy } from '../../config/watch.js';
import type { WatchMemory } from '../../store/watch-memory.js';
import { scheduleSlackMs } from '../../store/watch-memory.js';
import type { ReconcileRequest } from '../request.js';
import { windowStart } from '../triggers/gap.js';

/** What one poll read of one of the receiver's webhooks in the CRM. */
export interface Observed {
  context: string;
  webhookId: number;
  /** `Active`, `Stopped`, `TooManyErrors` (as the REST API writes it). */
  state: string;
  /** The usage counters' total errors, and the last error the CRM recorded. */
  totalErrors: number;
  lastError: string;
}

export interface DecisionSettings {
  pollMs: number;
  reactivate: ReactivatePolicy;
  /** Where a window starts for a webhook first seen not Active: the last event accepted under its name. */
  lastAcceptedAt?: number | undefined;
}

export interface WebhookDecision {
  /** The memory to write (conditionally) before acting. */
  next: WatchMemory;
  /** A reconcile to enqueue once `next` is written. */
  request: ReconcileRequest | undefined;
  /** Whether to set the webhook Active now (this attempt is counted in `next`). */
  activate: boolean;
}

/** Re-activations failed in a row before the alert goes (once, until the webhook is Active again). */
export const ALERT_AFTER_ATTEMPTS = 3;
/**
 * Polls a re-activation must last (Active, counters still) before the webhook counts as recovered: one
 * that errors again within them did not last, and its attempt still counts toward the backoff and the
 * alert (a target that answers the CRM's test delivery but fails the real ones).
 */
export const REACTIVATION_LASTS_POLLS = 3;
/** The longest wait between two re-activations. */
export const MAX_BACKOFF_MS = 3_600_000;

/** The wait after the n-th failed re-activation: one poll, then doubling, an hour at most. */
export function reactivationBackoffMs(attempts: number, pollMs: number): number {
  return Math.min(MAX_BACKOFF_MS, pollMs * 2 ** Math.max(0, attempts - 1));
}

/**
 * One poll's decision for one webhook, pure. A webhook found Active whose error counters (total
 * errors, last error) did not move is healthy: the next window starts at this poll. Trouble opens a
 * window from the last healthy poll, less the margin: counters that moved while Active (failures the
 * receiver never saw), a webhook found no longer Active (once, when it leaves Active: the CRM sends
 * nothing more meanwhile), and again when it is Active again (its whole gap). A webhook first seen not
 * Active starts its window at the last event accepted under its name (else one interval ago). A
 * TooManyErrors webhook (and a Stopped one with `stopped-too`) is set Active with backoff; a
 * re-activation that does not last {@link REACTIVATION_LASTS_POLLS} polls keeps counting.
 */
export function decideWebhook(
  memory: WatchMemory | undefined,
  seen: Observed,
  now: number,
  settings: DecisionSettings,
): WebhookDecision {
  const active = seen.state === 'Active';
  const counters = { state: seen.state, totalErrors: seen.totalErrors, lastError: seen.lastError };
  const windowFrom = (since: number): ReconcileRequest => ({
    context: seen.context,
    reason: 'poll',
    from: windowStart(since),
    webhookId: seen.webhookId,
    requestedAt: new Date(now).toISOString(),
  });

  if (active) {
    const troubled =
      memory !== undefined &&
      (memory.state !== 'Active' ||
        memory.totalErrors !== seen.totalErrors ||
        memory.lastError !== seen.lastError);
    // A re-activation on probation keeps its count until it has lasted; trouble meanwhile extends it.
    const { attempts, nextAttemptAt, alerted, reactivatedAt } = memory ?? {};
    const onProbation =
      reactivatedAt !== undefined &&
      (troubled || now - reactivatedAt < REACTIVATION_LASTS_POLLS * settings.pollMs);
    return {
      next: {
        ...counters,
        lastHealthyAt: now,
        ...(onProbation && {
          reactivatedAt,
          ...(attempts !== undefined && { attempts }),
          ...(nextAttemptAt !== undefined && { nextAttemptAt }),
          ...(alerted && { alerted }),
        }),
      },
      request: troubled ? windowFrom(memory.lastHealthyAt) : undefined,
      activate: false,
    };
  }

  const lastHealthyAt = memory?.lastHealthyAt ?? settings.lastAcceptedAt ?? now - settings.pollMs;
  // Once per outage: while it is not Active the CRM sends nothing (a failed test delivery may still count).
  const left = memory === undefined || memory.state === 'Active';
  const allowed =
    (seen.state === 'TooManyErrors' && settings.reactivate !== 'off') ||
    (seen.state === 'Stopped' && settings.reactivate === 'stopped-too');
  const due = now + scheduleSlackMs(settings.pollMs) >= (memory?.nextAttemptAt ?? 0);
  const activate = allowed && due;
  const attempts = (memory?.attempts ?? 0) + (activate ? 1 : 0);
  const next: WatchMemory = {
    ...counters,
    lastHealthyAt,
    ...(attempts > 0 && {
      attempts,
      nextAttemptAt: activate
        ? now + reactivationBackoffMs(attempts, settings.pollMs)
        : memory?.nextAttemptAt,
    }),
    ...(memory?.alerted && { alerted: true }),
  };
  return { next, request: left ? windowFrom(lastHealthyAt) : undefined, activate };
}
