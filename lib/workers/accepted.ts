import type { Logger } from '@aws-lambda-powertools/logger';
import { ForgetfulMap } from '../forgetful-map.js';
import type { LastAccepted } from '../model/types.js';
import type { StoreWriter } from '../store/types.js';

/** One event a row worker merged: it may move its (context, WebhookName) marker. */
export interface AcceptedNote {
  context: string;
  webhookName: string;
  accepted: LastAccepted;
}

/**
 * How long a row worker leaves a (context, WebhookName) marker as it wrote it before raising it again:
 * at most one write per marker per worker instance in this time. A marker that lags only
 * makes a gap open earlier (docs/workers.md), so this bounds how much earlier, not whether a change is
 * re-fetched.
 */
export const ACCEPTED_MARKER_INTERVAL_MS = 60_000;

/**
 * The last-accepted markers of a row worker. `raise` is called for each merged event after its row was
 * written, so the marker never runs ahead of what is stored. It writes the (context, WebhookName)
 * marker the first time this worker instance sees it, then at most once per `intervalMs`: it lags the
 * newest merged event by what the instance merged in the last `intervalMs` (and what other instances
 * merged), which only makes a gap open earlier (see docs/workers.md). A write that would not move the
 * marker forward from what this worker already wrote is skipped too.
 */
export interface AcceptedMarkers {
  /** Raises the marker to `note` when due; throws when the write fails (its record is retried). */
  raise(note: AcceptedNote): Promise<void>;
}

export interface AcceptedMarkerOptions {
  /** Default {@link ACCEPTED_MARKER_INTERVAL_MS}. */
  intervalMs?: number;
  /** Milliseconds since the epoch; default Date.now. */
  now?: () => number;
}

export function createAcceptedMarkers(
  store: Pick<StoreWriter, 'markAccepted'>,
  logger: Logger,
  { intervalMs = ACCEPTED_MARKER_INTERVAL_MS, now = Date.now }: AcceptedMarkerOptions = {},
): AcceptedMarkers {
  /**
   * Per marker, an order key the stored marker is known to have reached, and when this worker wrote it; a full
   * memory starts over (a write too many, no harm).
   */
  const written = new ForgetfulMap<string, { seq: string; at: number }>();
  return {
    async raise(note) {
      const key = JSON.stringify([note.context, note.webhookName]);
      const known = written.get(key);
      if (known !== undefined && (known.seq >= note.accepted.seq || now() - known.at < intervalMs)) return;
      try {
        await store.markAccepted(note.context, note.webhookName, note.accepted);
      } catch (error) {
        logger.error('last-accepted marker not written; retrying its record', {
          context: note.context,
          webhookName: note.webhookName,
          eventId: note.accepted.eventId,
          error: error as Error,
        });
        throw error;
      }
      written.set(key, { seq: note.accepted.seq, at: now() });
    },
  };
}
