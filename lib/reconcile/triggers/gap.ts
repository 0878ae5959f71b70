import type { BusEntry } from '../../bus/entry.js';
import type { Webhook } from '../../model/types.js';
import { gapsOf } from '../../webhook-state.js';
import { lifecycleEntry } from '../records/lifecycle.js';
import type { ReconcileRequest } from '../request.js';

/**
 * How far before a gap's `openedAt` (or the last healthy poll) a reconcile window starts. `openedAt`
 * is the Timestamp of the last event accepted (the CRM's web server clock); a row's `updated` comes
 * from its database server, is written before the event is raised, and the archive compares whole
 * seconds; an event failed at a poll may be counted only after it (the CRM retries for ~5 s). A minute
 * covers all of these with room: it costs a few rows listed twice, never a change missed.
 */
export const WINDOW_MARGIN_MS = 60_000;

/** `time` less the margin, as ISO 8601 UTC (the reconcile request's `from`). */
export function windowStart(time: string | number, marginMs = WINDOW_MARGIN_MS): string {
  const ms = typeof time === 'number' ? time : Date.parse(time);
  return new Date(ms - marginMs).toISOString();
}

/** A reconcile to enqueue and the lifecycle event to publish, for one gap that a state event opened or closed. */
export interface GapTrigger {
  request: ReconcileRequest;
  entry: BusEntry;
}

/**
 * What the state event `eventId` does to the gaps of the webhook it was merged into: the gap it
 * opened (reconcile from `openedAt` less the margin to now, `receiver.gap.opened`) and the gap it
 * closed (the same window again, now to the moment it is Active, `receiver.gap.closed`). Read from
 * the stored webhook, not from what changed, so a redelivery finds the same triggers, and the
 * requests are deterministic (times from the events, never the clock): the reconcile queue's FIFO
 * deduplication makes the same trigger twice one run.
 */
export function gapTriggers(webhook: Webhook, eventId: string): GapTrigger[] {
  const triggers: GapTrigger[] = [];
  for (const gap of gapsOf(webhook)) {
    const { context, webhookId, webhookName, openedAt, closedAt } = gap;
    const from = windowStart(openedAt);
    if (gap.openedByEventId === eventId) {
      const opened = webhook.transitions.find((transition) => transition.eventId === eventId);
      triggers.push({
        request: {
          context,
          reason: 'gap-opened',
          from,
          webhookId,
          requestedAt: isoOf(opened?.timestamp ?? openedAt),
        },
        entry: lifecycleEntry('receiver.gap.opened', { context, webhookId, webhookName, openedAt }),
      });
    }
    if (closedAt !== undefined && gap.closedByEventId === eventId) {
      triggers.push({
        request: { context, reason: 'gap-closed', from, webhookId, requestedAt: isoOf(closedAt) },
        entry: lifecycleEntry('receiver.gap.closed', { context, webhookId, webhookName, openedAt, closedAt }),
      });
    }
  }
  return triggers;
}

/** A sender Timestamp (7 fractional digits) as the request's ISO time. */
function isoOf(timestamp: string): string {
  return new Date(Date.parse(timestamp)).toISOString();
}
