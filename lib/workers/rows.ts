import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { applyErasing, deletesRow, isErased } from '../erasure/project.js';
import { familyOfEvent, type RowEvent } from '../events/index.js';
import { type Hooks, type Outcome, runHook } from '../hooks.js';
import { jsonMembers } from '../json-text.js';
import { METRIC, OUTCOME_METRIC } from '../metrics.js';
import { eventSeq } from '../model/order-key.js';
import type { EventRecord, Row } from '../model/types.js';
import {
  type ApplyOptions,
  apply,
  contentHash,
  olderThanWindow,
  type Recognition,
  recognise,
  snapshotDiff,
} from '../projection.js';
import { VersionConflictError } from '../store/errors.js';
import type { Store, Versioned } from '../store/types.js';
import { ContentionError, HookError } from './errors.js';
import type { DeliveryMeta } from './record.js';

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
  /** True when the change of an event (an echo or not) is published to the bus; default never. */
  publishes?: (echo: boolean) => boolean;
  /** ERASE_ON_DELETE: the entities whose deleted rows keep no personal data (lib/config/erasure.ts); default none. */
  erasesOnDelete?: (entity: string) => boolean;
}

/**
 * {@link Outcome}, or a delivery recorded but not merged: a conflicting one, or a resend (no hook for
 * either); or `unchanged`: a snapshot equal to the row, neither recorded nor merged.
 */
export type RowOutcome = Outcome | 'conflict' | 'resend' | 'unchanged';

export interface RowResult {
  /** The row as stored; undefined only when a conflicting delivery arrives before its row exists. */
  row: Row | undefined;
  outcome: RowOutcome;
  echo: boolean;
  /** The event's order key. */
  seq: string;
  /**
   * Its change still awaits publication: merged now, or merged earlier by an attempt whose bus entry
   * was not published (the history record says so). Always false when nothing is published.
   */
  unpublished: boolean;
  /** Of a snapshot (`<entity>.reconciled`): the FieldValues fields it changed, as its history record says. */
  changes?: string[];
  /**
   * The row is erased and this event's body carries data (anything but the deletion itself): its
   * change is not published, so no personal data reaches the bus again.
   */
  withheld?: true;
}

/**
 * Records one contact/activity event and merges it into its row:
 *
 * 1. the row is read and the event recognised ({@link recognise}): new, a duplicate, a resend under
 *    a new EventId, or a conflicting delivery of a known EventId; an event older than the row's
 *    window is recognised from the history instead;
 * 2. history — one `attribute_not_exists` put into the events table (a resend or a conflict is
 *    recorded too, pointing to the event it repeats, but not merged, counted or passed to hooks);
 * 3. the row — {@link apply}, one put conditioned on the version read (retried on conflict; skipped
 *    when the event is already part of the row). When the history already had the event (a retry
 *    after a failure between the two writes), `eventCount` is recounted from the history;
 * 4. the integrator hook, unless the event is an echo;
 * 5. an erased row (on request, or deleted for an entity of ERASE_ON_DELETE, docs/privacy.md): the
 *    row is merged without its data ({@link applyErasing}), the event recorded with an erased body,
 *    then every history record of the row erased; its change is withheld from the bus unless the event
 *    is the deletion itself.
 *
 * The last-accepted marker and the bus entry are the queue worker's to write (lib/workers/queue-workers.ts).
 *
 * Every step is safe to repeat, so a redelivery at any point converges on the same state.
 */
export async function processRowEvent(
  deps: RowWorkerDeps,
  event: RowEvent,
  meta: DeliveryMeta,
): Promise<RowResult> {
  const result = await recordAndMerge(deps, event, meta);
  if (result.row === undefined || !isErased(result.row, deps.erasesOnDelete)) return result;
  // The row is erased; its history is erased after it, here and on every later event of the row (a
  // redelivery after a crash between the two redoes what is left; nothing is left, nothing is written).
  const key = [event.ContextIdentifier, event.Entity, event.PrimaryKey] as const;
  const erased = await deps.store.eraseRowHistory(...key);
  if (erased > 0)
    deps.logger.info('deleted row erased from its history', { eventId: event.EventId, records: erased });
  return deletesRow(event) ? result : { ...result, withheld: true };
}

/** {@link processRowEvent} before the erasure of a deleted row's history. */
async function recordAndMerge(deps: RowWorkerDeps, event: RowEvent, meta: DeliveryMeta): Promise<RowResult> {
  const { store, logger, metrics } = deps;
  const seq = eventSeq(event);
  const echo = deps.ignoreAssociateIds.has(event.ChangedByAssociateId);
  const publishes = deps.publishes?.(echo) ?? false;
  const body = meta.rawBody ?? JSON.stringify(event);
  const hash = contentHash(body, event.EventId);
  const key = [event.ContextIdentifier, event.Entity, event.PrimaryKey] as const;

  const loaded = await store.loadRow(...key);
  // A row that is (or this event makes) deleted keeps no personal data: its records are written erased.
  const erasing =
    (loaded.item !== undefined && isErased(loaded.item, deps.erasesOnDelete)) ||
    ((deps.erasesOnDelete?.(event.Entity) ?? false) && deletesRow(event));
  let found: Found = recognise(loaded.item, event, hash);
  let history: EventRecord[] | undefined;
  let earlier: EventRecord | undefined;
  if (found.kind === 'unknown') {
    history = await store.listRowEvents(...key);
    found = recogniseInHistory(history, event, seq, hash);
    if (found.kind === 'retry') earlier = history.find((recorded) => recorded.seq === seq);
  }

  const applyOptions: ApplyOptions = {
    contentHash: hash,
    ...(meta.rawBody !== undefined && { json: jsonMembers(meta.rawBody, ['FieldValues', 'Values']) }),
  };
  // A snapshot is recorded, counted and published only when it changes the row: what it changes is
  // known before it is recorded, and the record keeps it (its redelivery publishes the same).
  const snapshot = familyOfEvent(event).effect === 'reconciled';
  let changes: string[] | undefined;
  if (snapshot && found.kind === 'new') {
    const merged = applyErasing(loaded.item, event, applyOptions, deps.erasesOnDelete);
    if (loaded.item !== undefined && !snapshotDiff(loaded.item, merged).changed) {
      // Unless an earlier attempt recorded it (it changed the row then, and its row write failed): a
      // recorded snapshot is merged and counted whatever it changes now, so the count is the history's.
      earlier = await store.getRowEvent(...key, seq);
      if (earlier === undefined) {
        metrics.addMetric(METRIC.SnapshotsUnchanged, MetricUnit.Count, 1);
        logger.debug('snapshot equal to the row: nothing recorded', { eventId: event.EventId });
        // A newer answer confirming the row moves its order keys to F (one write), nothing else.
        const { row } =
          merged === loaded.item
            ? { row: loaded.item }
            : await mergeRow(deps, event, seq, applyOptions, loaded, meta.messageId, false);
        return { row, outcome: 'unchanged', echo, seq, unpublished: false };
      }
      found = recordHash(earlier) === hash ? { kind: 'retry' } : { kind: 'conflict', of: seq };
    } else changes = snapshotDiff(loaded.item, merged).fields;
  }

  const record = (extra: { seq?: string; conflictOf?: string; resendOf?: string; unpublished?: true } = {}) =>
    store.recordEvent({
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
      body,
      ...(changes !== undefined && { changed: changes }),
      ...(erasing && { erased: true as const, contentHash: hash }),
      ...extra,
    });

  if (found.kind === 'new' && !(await record(publishes ? { unpublished: true } : {}))) {
    // The history had this order key already: a retry after a failure between history and row, or
    // another body under the same EventId and Timestamp.
    earlier = await store.getRowEvent(...key, seq);
    found =
      earlier === undefined || recordHash(earlier) === hash
        ? { kind: 'retry' }
        : { kind: 'conflict', of: seq };
  }
  if (found.kind === 'conflict') {
    await record({ seq: `${seq}#conflict#${hash}`, conflictOf: found.of });
    metrics.addMetric(METRIC.EventIdConflicts, MetricUnit.Count, 1);
    logger.warn('same EventId, other content: recorded as a conflict, the row follows the first', {
      eventId: event.EventId,
      event: event.Event,
      timestamp: event.Timestamp,
      follows: found.of,
    });
    return { row: loaded.item, outcome: 'conflict', echo, seq, unpublished: false };
  }
  if (found.kind === 'resend') {
    await record({ resendOf: found.of });
    metrics.addMetric(METRIC.EventsResent, MetricUnit.Count, 1);
    logger.info('resend of a known event under a new EventId: recorded, not merged', {
      eventId: event.EventId,
      resendOf: found.of,
    });
    return { row: loaded.item, outcome: 'resend', echo, seq, unpublished: false };
  }

  const { row, outcome } =
    found.kind === 'duplicate'
      ? { row: loaded.item!, outcome: 'duplicate' as const }
      : await mergeRow(
          deps,
          event,
          seq,
          // Once recorded, a snapshot is merged (and counted) even where it changes nothing.
          snapshot ? { ...applyOptions, recorded: true } : applyOptions,
          loaded,
          meta.messageId,
          found.kind === 'retry',
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
  // A duplicate publishes only when an earlier attempt merged it but did not publish it.
  const recorded =
    outcome === 'duplicate' && (publishes || snapshot)
      ? (earlier ?? (await store.getRowEvent(...key, seq)))
      : earlier;
  const unpublished = publishes && (outcome !== 'duplicate' || recorded?.unpublished === true);
  if (snapshot) changes ??= recorded?.changed ?? [];
  return { row, outcome, echo, seq, unpublished, ...(changes !== undefined && { changes }) };
}

/** What the worker knows of an event: {@link Recognition}, or `retry` when only its row write is missing (or unknown). */
type Found = Recognition | { kind: 'retry' };

/** {@link recognise} for an event older than the row's window, from the row's history. */
function recogniseInHistory(history: EventRecord[], event: RowEvent, seq: string, hash: string): Found {
  for (const record of history) {
    if (record.conflictOf !== undefined) continue;
    const known = recordHash(record);
    if (record.seq === seq && record.resendOf !== undefined) return { kind: 'resend', of: record.resendOf };
    if (record.resendOf !== undefined) continue;
    if (record.seq === seq) return known === hash ? { kind: 'retry' } : { kind: 'conflict', of: seq };
    if (record.eventId === event.EventId) return { kind: 'conflict', of: record.seq };
    if (known === hash) return { kind: 'resend', of: record.seq };
  }
  return { kind: 'new' };
}

/** The {@link contentHash} of a recorded event: the one it kept when its body was erased. */
function recordHash(record: EventRecord): string {
  return record.contentHash ?? contentHash(record.body, record.eventId);
}

/** Distinct events in a row's history: resends and conflicting deliveries are not events of their own. */
function countEvents(history: EventRecord[]): number {
  return history.filter((record) => record.conflictOf === undefined && record.resendOf === undefined).length;
}

/**
 * A row's eventCount from its history, for merging an event older than the row's full recent window:
 * the events merged at or after the window's oldest are the window itself; those before it are what the
 * history records there (the event being merged among them). A recorded event newer than that which the
 * row has not merged yet (its row write failed; it waits for its retry) is left for that retry to add.
 */
function countWithHistory(row: Row, history: EventRecord[]): number {
  const oldest = row.recentSeqs[0] ?? '';
  return countEvents(history.filter((record) => record.seq < oldest)) + row.recentSeqs.length;
}

async function mergeRow(
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
