import type { Logger } from '@aws-lambda-powertools/logger';
import type { RowEvent } from '../events/index.js';
import type { LastAccepted, StoreWriter } from '../store/types.js';

interface Pending {
  context: string;
  webhookName: string;
  newest: LastAccepted;
  messageIds: string[];
}

/**
 * The last-accepted markers of one batch: the row worker notes every event it merged and writes each
 * (context, WebhookName) marker once, with the newest of them, after the batch's records were applied.
 * The marker therefore never runs ahead of what is stored; it lags by at most one batch, which only
 * makes a gap open earlier (see docs/workers.md).
 */
export interface AcceptedBatch {
  note(event: RowEvent, seq: string, messageId: string): void;
  /**
   * One conditional "only raise" update per (context, WebhookName). Returns the message ids of the
   * records whose marker could not be written: they must be retried (they are already applied, so the
   * retry only writes the marker again).
   */
  flush(store: Pick<StoreWriter, 'markAccepted'>, logger: Logger): Promise<Set<string>>;
}

export function createAcceptedBatch(): AcceptedBatch {
  const pending = new Map<string, Pending>();
  return {
    note(event, seq, messageId) {
      const key = JSON.stringify([event.ContextIdentifier, event.WebhookName]);
      const accepted = { seq, timestamp: event.Timestamp, eventId: event.EventId };
      const entry = pending.get(key);
      if (entry === undefined) {
        pending.set(key, {
          context: event.ContextIdentifier,
          webhookName: event.WebhookName,
          newest: accepted,
          messageIds: [messageId],
        });
        return;
      }
      entry.messageIds.push(messageId);
      if (seq > entry.newest.seq) entry.newest = accepted;
    },

    async flush(store, logger) {
      const failed = new Set<string>();
      const writes = [...pending.values()].map(async (entry) => {
        try {
          await store.markAccepted(entry.context, entry.webhookName, entry.newest);
        } catch (error) {
          logger.error('last-accepted marker not written; retrying its records', {
            context: entry.context,
            webhookName: entry.webhookName,
            eventId: entry.newest.eventId,
            error: error as Error,
          });
          for (const id of entry.messageIds) failed.add(id);
        }
      });
      await Promise.all(writes);
      pending.clear();
      return failed;
    },
  };
}
