import { applyErasing } from '../erasure/project.js';
import type { RowEvent } from '../events/index.js';
import type { Outcome } from '../hooks.js';
import type { Row } from '../model/types.js';
import type { ApplyOptions } from '../projection.js';
import { olderThanWindow } from '../recognition.js';
import { VersionConflictError } from '../store/errors.js';
import type { Versioned } from '../store/types.js';
import { ContentionError } from './errors.js';
import { countWithHistory } from './row-history.js';
import type { RowWorkerDeps } from './rows.js';

/**
 * Merges the event into its row: {@link applyErasing} and one put conditioned on the version read,
 * read again and retried on a version conflict (`deps.maxAttempts`, default 5, then
 * {@link ContentionError}). `duplicate` when the row has the event already.
 */
export async function mergeRow(
  deps: RowWorkerDeps,
  event: RowEvent,
  seq: string,
  options: ApplyOptions,
  first: Versioned<Row>,
  messageId: string,
  /** The history put found this event's record already there: an earlier attempt may have merged it. */
  retry: boolean,
): Promise<{ row: Row; outcome: Outcome }> {
  const attempts = deps.maxAttempts ?? 5;
  const key = [event.ContextIdentifier, event.Entity, event.PrimaryKey] as const;
  let loaded = first;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    if (attempt > 1) loaded = await deps.store.loadRow(...key);
    const { item, version } = loaded;
    // Whether the event is merged already, the row's window tells, unless the event is older than the
    // full window and an earlier attempt (a retry) or another handler of the same message (the row
    // changed under this one) may have merged it: then the history, read after the row, counts.
    const counted = item !== undefined && olderThanWindow(item, seq) && (retry || attempt > 1);
    const next = applyErasing(
      item,
      event,
      counted
        ? { ...options, eventCount: countWithHistory(item, await deps.store.listRowEvents(...key)) }
        : options,
      deps.erasesOnDelete,
    );
    if (item !== undefined && next === item) return { row: item, outcome: 'duplicate' };
    try {
      await deps.store.saveRow(next, version);
      return { row: next, outcome: next.lastSeq === seq ? 'applied' : 'late' };
    } catch (error) {
      if (!(error instanceof VersionConflictError)) throw error;
      deps.logger.warn('row changed while merging, retrying', { eventId: event.EventId, attempt });
    }
  }
  throw new ContentionError(messageId, event.EventId, attempts);
}
