import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { RowEvent } from '../events/index.js';
import { type Hooks, type Outcome, runRowHook } from '../hooks.js';
import { apply } from '../projection.js';
import { VersionConflictError } from '../store/errors.js';
import { eventSeq } from '../store/keys.js';
import type { Row, StoreWriter } from '../store/types.js';
import type { AcceptedBatch } from './accepted.js';
import { ContentionError, HookError } from './errors.js';
import type { DeliveryMeta } from './record.js';

export type RowStore = Pick<StoreWriter, 'recordEvent' | 'loadRow' | 'saveRow' | 'markAccepted'>;

export interface RowWorkerDeps {
  store: RowStore;
  hooks: Hooks;
  /** Associates whose changes are the integration's own writes coming back (echoes). */
  ignoreAssociateIds: ReadonlySet<number>;
  logger: Logger;
  metrics: Metrics;
  /** Read-merge-write attempts before giving up on a contended row. */
  maxAttempts?: number;
}

export interface RowEventOptions {
  /**
   * The batch this event belongs to: the last-accepted marker is noted there and written once per
   * batch (see {@link AcceptedBatch}). Without it the marker is written for this event alone.
   */
  accepted?: AcceptedBatch;
}

export interface RowResult {
  row: Row;
  outcome: Outcome;
  echo: boolean;
}

/**
 * Records one contact/activity event and merges it into its row:
 *
 * 1. history first — one `attribute_not_exists` put into the events table (also tells whether the
 *    event was seen before);
 * 2. the row — read, {@link apply}, one put conditioned on the version read (retried on conflict;
 *    skipped when the event is already part of the row);
 * 3. the context's last-accepted marker for gap windows — one conditional update that only raises it,
 *    or, in a batch, a note that the batch writes once per context and WebhookName when it ends;
 * 4. the integrator hook, unless the event is an echo.
 *
 * Every step is safe to repeat, so a redelivery at any point converges on the same state.
 */
export async function processRowEvent(
  deps: RowWorkerDeps,
  event: RowEvent,
  meta: DeliveryMeta,
  options: RowEventOptions = {},
): Promise<RowResult> {
  const { store, logger, metrics } = deps;
  const seq = eventSeq(event);
  const echo = deps.ignoreAssociateIds.has(event.ChangedByAssociateId);

  const isNew = await store.recordEvent({
    context: event.ContextIdentifier,
    entity: event.Entity,
    primaryKey: event.PrimaryKey,
    seq,
    eventId: event.EventId,
    eventName: event.Event,
    timestamp: event.Timestamp,
    changedByAssociateId: event.ChangedByAssociateId,
    echo,
    ...(meta.signatureVerified !== undefined && { signatureVerified: meta.signatureVerified }),
    ...(meta.receivedAt !== undefined && { receivedAt: meta.receivedAt }),
    payload: event,
    ...(meta.rawBody !== undefined && { body: meta.rawBody }),
  });

  const { row, outcome } = await mergeRow(deps, event, seq, !isNew, meta.messageId);
  if (options.accepted !== undefined) {
    options.accepted.note(event, seq, meta.messageId);
  } else {
    await store.markAccepted(event.ContextIdentifier, event.WebhookName, {
      seq,
      timestamp: event.Timestamp,
      eventId: event.EventId,
    });
  }

  metrics.addMetric(OUTCOME_METRIC[outcome], MetricUnit.Count, 1);
  if (echo) metrics.addMetric('EchoEvents', MetricUnit.Count, 1);
  logger.debug('row event processed', { eventId: event.EventId, event: event.Event, outcome, echo });

  if (!echo) {
    try {
      await runRowHook(deps.hooks, event, row, { outcome, messageId: meta.messageId });
    } catch (cause) {
      throw new HookError(meta.messageId, event.EventId, cause);
    }
  }
  return { row, outcome, echo };
}

const OUTCOME_METRIC: Record<Outcome, string> = {
  applied: 'EventsApplied',
  late: 'EventsLate',
  duplicate: 'EventsDuplicate',
};

async function mergeRow(
  deps: RowWorkerDeps,
  event: RowEvent,
  seq: string,
  seenBefore: boolean,
  messageId: string,
): Promise<{ row: Row; outcome: Outcome }> {
  const attempts = deps.maxAttempts ?? 5;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const { item, version } = await deps.store.loadRow(
      event.ContextIdentifier,
      event.Entity,
      event.PrimaryKey,
    );
    const next = apply(item, event, { seenBefore });
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
