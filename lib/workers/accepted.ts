import type { Logger } from '@aws-lambda-powertools/logger';
import type { LastAccepted } from '../model/types.js';
import type { StoreWriter } from '../store/types.js';

/** One event a row worker merged: it may move its (context, WebhookName) marker. */
export interface AcceptedNote {
  context: string;
  webhookName: string;
  accepted: LastAccepted;
}

/**
 * The last-accepted markers of a row worker. `write` raises each (context, WebhookName) marker once
 * per batch, to the newest event the batch merged, after the batch's records were applied: the marker
 * never runs ahead of what is stored; it lags by at most one batch, which only makes a gap open
 * earlier (see docs/workers.md). A write that would not move the marker forward from what this worker
 * already wrote (kept across invocations) is skipped: it would cost a write unit for nothing.
 */
export interface AcceptedMarkers {
  /** Returns the message ids whose marker could not be written: they must be retried. */
  write(notes: ReadonlyMap<string, AcceptedNote>): Promise<Map<string, Error>>;
}

/** At most this many markers remembered; beyond it the memory starts over (a write too many, no harm). */
const MAX_REMEMBERED = 10_000;

export function createAcceptedMarkers(
  store: Pick<StoreWriter, 'markAccepted'>,
  logger: Logger,
): AcceptedMarkers {
  /** Per marker, an order key the stored marker is known to have reached. */
  const reached = new Map<string, string>();
  return {
    async write(notes) {
      const pending = new Map<string, { note: AcceptedNote; messageIds: string[] }>();
      for (const [messageId, note] of notes) {
        const key = JSON.stringify([note.context, note.webhookName]);
        const entry = pending.get(key);
        if (entry === undefined) pending.set(key, { note, messageIds: [messageId] });
        else {
          entry.messageIds.push(messageId);
          if (note.accepted.seq > entry.note.accepted.seq) entry.note = note;
        }
      }
      const failed = new Map<string, Error>();
      const writes = [...pending].map(async ([key, { note, messageIds }]) => {
        const known = reached.get(key);
        if (known !== undefined && known >= note.accepted.seq) return;
        try {
          await store.markAccepted(note.context, note.webhookName, note.accepted);
          if (reached.size >= MAX_REMEMBERED) reached.clear();
          reached.set(key, note.accepted.seq);
        } catch (error) {
          logger.error('last-accepted marker not written; retrying its records', {
            context: note.context,
            webhookName: note.webhookName,
            eventId: note.accepted.eventId,
            error: error as Error,
          });
          for (const id of messageIds) failed.set(id, error as Error);
        }
      });
      await Promise.all(writes);
      return failed;
    },
  };
}
