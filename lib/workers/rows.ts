import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { applyErasing, deletesRow, isErased } from '../erasure/project.js';
import type { RowEvent } from '../events/index.js';
import { type Hooks, type Outcome, runHook } from '../hooks.js';
import { METRIC, OUTCOME_METRIC } from '../metrics.js';
import type { Row } from '../model/types.js';
import { snapshotDiff } from '../projection.js';
import { recognise } from '../recognition.js';
import type { Store } from '../store/types.js';
import { type BusDecision, decideBus, type PublishedMemory } from './bus-decision.js';
import { HookError } from './errors.js';
import type { Publication } from './publish.js';
import type { DeliveryMeta } from './record.js';
import { type Delivery, type Known, readRow } from './row-delivery.js';
import { type Found, recogniseInHistory, record, repeatOf } from './row-history.js';
import { mergeRow } from './row-merge.js';

export type RowStore = Pick<
  Store,
  'recordEvent' | 'getRowEvent' | 'listRowEvents' | 'loadRow' | 'saveRow' | 'markAccepted' | 'eraseRowHistory'
>;

export interface RowWorkerDeps {
  store: RowStore;
  hooks: Hooks;
  /** Associates whose changes are the integration's own writes coming back (echoes). */
  ignoreAssociateIds: ReadonlySet<number>;
  logger: Logger;
  metrics: Metrics;
  /** Read-merge-write attempts before giving up on a contended row. */
  maxAttempts?: number;
  /** How changes are published (PUBLISH_EVENTS); absent: none is. */
  publication?: Publication | undefined;
  /** The changes this worker instance published; absent: none remembered. */
  published?: PublishedMemory;
  /** ERASE_ON_DELETE: the entities whose deleted rows keep no personal data (lib/config/erasure.ts); default none. */
  erasesOnDelete?: (entity: string) => boolean;
}

/**
 * {@link Outcome}, or a delivery recorded but not merged: a conflicting one, or a resend (no hook for
 * either); or `unchanged`: a snapshot equal to the row, neither recorded nor merged.
 */
export type RowOutcome = Outcome | 'conflict' | 'resend' | 'unchanged';

/** Whether the event was merged into its row (now or by an earlier attempt). */
export function isMerged(outcome: RowOutcome): outcome is Outcome {
  return outcome === 'applied' || outcome === 'late' || outcome === 'duplicate';
}

export interface RowResult {
  /** The row as stored; undefined only when a conflicting delivery arrives before its row exists. */
  row: Row | undefined;
  outcome: RowOutcome;
  echo: boolean;
  /** The event's order key. */
  seq: string;
  /** Whether its change goes on the bus, or why not ({@link decideBus}). */
  bus: BusDecision;
  /** Of a snapshot (`<entity>.reconciled`): the FieldValues fields it changed, as its history record says. */
  changes?: string[];
}

/**
 * Records one row event, merges it into its row and decides whether its change is published, in
 * steps: the event recognised ({@link recogniseEvent}); a new snapshot compared with the row
 * ({@link compareSnapshot}); a new event recorded ({@link recordNew}), or a repeat ({@link recordRepeat});
 * the row merged ({@link mergeEvent}); an erased row's history erased and the publication decided
 * ({@link finish}). An erased row (on request, or deleted for an entity of ERASE_ON_DELETE,
 * docs/privacy.md) is merged without its data and its events recorded erased.
 *
 * The last-accepted marker and the bus entry are the queue worker's to write (lib/workers/queue-workers.ts).
 * Every step is safe to repeat, so a redelivery at any point converges on the same state.
 */
export async function processRowEvent(
  deps: RowWorkerDeps,
  event: RowEvent,
  meta: DeliveryMeta,
): Promise<RowResult> {
  const delivery = await readRow(deps, event, meta);
  let known = await recogniseEvent(deps.store, delivery);
  if (delivery.snapshot && known.found.kind === 'new') {
    const compared = await compareSnapshot(deps, delivery);
    if ('outcome' in compared) return finish(deps, delivery, compared);
    known = compared;
  }
  known = await recordNew(deps.store, delivery, known);
  const { found } = known;
  const handled =
    found.kind === 'conflict' || found.kind === 'resend'
      ? await recordRepeat(deps, delivery, { ...known, found })
      : await mergeEvent(deps, delivery, { ...known, found });
  return finish(deps, delivery, handled);
}

/** What a step that ends the event's handling leaves to {@link finish}. */
interface Handled {
  row: Row | undefined;
  outcome: RowOutcome;
  changes?: string[] | undefined;
  /** Of a duplicate: its change went on the bus already (its history record or the instance's memory says). */
  publishedAlready?: boolean;
}

/** Step 1: the event as its row knows it, or else as the row's history does. */
async function recogniseEvent(store: RowStore, delivery: Delivery): Promise<Known> {
  const found = recognise(delivery.loaded.item, delivery.event, delivery.hash);
  if (found.kind !== 'unknown') return { found };
  const history = await store.listRowEvents(...delivery.key);
  const known = recogniseInHistory(history, delivery.event, delivery.seq, delivery.hash);
  return {
    found: known,
    earlier: known.kind === 'retry' ? history.find((recorded) => recorded.seq === delivery.seq) : undefined,
  };
}

/**
 * Step 2, of a new snapshot: what it changes is known before it is recorded, and the record keeps it
 * (its redelivery publishes the same). Equal to the row, it ends `unchanged`, unless an earlier attempt
 * recorded it (it changed the row then, and its row write failed): a recorded snapshot is merged and
 * counted whatever it changes now, so the count is the history's.
 */
async function compareSnapshot(deps: RowWorkerDeps, delivery: Delivery): Promise<Known | Handled> {
  const { event, seq, loaded } = delivery;
  const merged = applyErasing(loaded.item, event, delivery.options, deps.erasesOnDelete);
  const diff = snapshotDiff(loaded.item, merged);
  if (loaded.item === undefined || diff.changed) return { found: { kind: 'new' }, changes: diff.fields };
  const earlier = await deps.store.getRowEvent(...delivery.key, seq);
  if (earlier !== undefined) return { found: repeatOf(earlier, delivery), earlier };
  deps.metrics.addMetric(METRIC.SnapshotsUnchanged, MetricUnit.Count, 1);
  deps.logger.debug('snapshot equal to the row: nothing recorded', { eventId: event.EventId });
  // A newer answer confirming the row moves its order keys to F (one write), nothing else.
  const { row } =
    merged === loaded.item
      ? { row: loaded.item }
      : await mergeRow(deps, event, seq, delivery.options, loaded, delivery.meta.messageId, false);
  return { row, outcome: 'unchanged' };
}

/**
 * Step 3, of a new event: its history record. Already there, the event is a retry after a failure
 * between history and row, or another body under the same EventId and Timestamp.
 */
async function recordNew(store: RowStore, delivery: Delivery, known: Known): Promise<Known> {
  if (known.found.kind !== 'new') return known;
  if (await record(store, delivery, known, delivery.publishable ? { unpublished: true } : {})) return known;
  const earlier = await store.getRowEvent(...delivery.key, delivery.seq);
  return {
    ...known,
    earlier,
    found: earlier === undefined ? { kind: 'retry' } : repeatOf(earlier, delivery),
  };
}

/** Step 3, of a conflict or a resend: recorded, pointing to the event it repeats; nothing else. */
async function recordRepeat(
  { store, metrics, logger }: RowWorkerDeps,
  delivery: Delivery,
  known: Known<Extract<Found, { kind: 'conflict' | 'resend' }>>,
): Promise<Handled> {
  const { event, seq, hash } = delivery;
  const { found } = known;
  if (found.kind === 'conflict') {
    await record(store, delivery, known, { seq: `${seq}#conflict#${hash}`, conflictOf: found.of });
    metrics.addMetric(METRIC.EventIdConflicts, MetricUnit.Count, 1);
    logger.warn('same EventId, other content: recorded as a conflict, the row follows the first', {
      eventId: event.EventId,
      event: event.Event,
      timestamp: event.Timestamp,
      follows: found.of,
    });
  } else {
    await record(store, delivery, known, { resendOf: found.of });
    metrics.addMetric(METRIC.EventsResent, MetricUnit.Count, 1);
    logger.info('resend of a known event under a new EventId: recorded, not merged', {
      eventId: event.EventId,
      resendOf: found.of,
    });
  }
  return { row: delivery.loaded.item, outcome: found.kind };
}

/**
 * Step 4: the event merged into its row (unless it is part of it already), counted, and passed to
 * the integrator hook unless it is an echo.
 */
async function mergeEvent(
  deps: RowWorkerDeps,
  delivery: Delivery,
  known: Known<Exclude<Found, { kind: 'conflict' | 'resend' }>>,
): Promise<Handled> {
  const { store, logger, metrics } = deps;
  const { event, seq, echo, snapshot, meta } = delivery;
  const { row, outcome } =
    known.found.kind === 'duplicate'
      ? { row: delivery.loaded.item!, outcome: 'duplicate' as const }
      : await mergeRow(
          deps,
          event,
          seq,
          // Once recorded, a snapshot is merged (and counted) even where it changes nothing.
          snapshot ? { ...delivery.options, recorded: true } : delivery.options,
          delivery.loaded,
          meta.messageId,
          known.found.kind === 'retry',
        );
  metrics.addMetric(OUTCOME_METRIC[outcome], MetricUnit.Count, 1);
  if (echo) metrics.addMetric(METRIC.EchoEvents, MetricUnit.Count, 1);
  logger.debug('row event processed', { eventId: event.EventId, event: event.Event, outcome, echo });
  if (!echo) {
    try {
      await runHook(deps.hooks, event, row, { outcome, messageId: meta.messageId });
    } catch (cause) {
      throw new HookError(meta.messageId, event.EventId, cause);
    }
  }
  // A duplicate's history record says whether an earlier attempt merged it and meant to publish it.
  const recorded =
    outcome === 'duplicate' && (delivery.publishable || snapshot)
      ? (known.earlier ?? (await store.getRowEvent(...delivery.key, seq)))
      : known.earlier;
  return {
    row,
    outcome,
    changes: snapshot ? (known.changes ?? recorded?.changed ?? []) : known.changes,
    publishedAlready:
      outcome === 'duplicate' &&
      (recorded?.unpublished !== true || deps.published?.has([...delivery.key, seq]) === true),
  };
}

/**
 * Step 5: an erased row's history is erased after it, here and on every later event of the row (a
 * redelivery after a crash between the two redoes what is left; nothing is left, nothing is written);
 * then whether the change goes on the bus.
 */
async function finish(deps: RowWorkerDeps, delivery: Delivery, handled: Handled): Promise<RowResult> {
  const { event, echo, seq } = delivery;
  const erased = handled.row !== undefined && isErased(handled.row, deps.erasesOnDelete);
  if (erased) {
    const records = await deps.store.eraseRowHistory(...delivery.key);
    if (records > 0)
      deps.logger.info('deleted row erased from its history', { eventId: event.EventId, records });
  }
  const bus = decideBus(deps.publication, {
    event: event.Event,
    outcome: isMerged(handled.outcome) ? handled.outcome : 'not merged',
    echo,
    erased: erased && !deletesRow(event),
    publishedAlready: handled.publishedAlready,
  });
  const { row, outcome, changes } = handled;
  return { row, outcome, echo, seq, bus, ...(changes !== undefined && { changes }) };
}
