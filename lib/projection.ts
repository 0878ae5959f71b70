import { isDeepStrictEqual } from 'node:util';
import { normaliseTimestamp, type RowEvent } from './events/index.js';
import { eventSeq } from './store/keys.js';
import type { Row, RowStatus } from './store/types.js';

/** How many of the newest order keys a row keeps for exact duplicate detection. */
export const RECENT_WINDOW = 8;

export interface ApplyOptions {
  /**
   * What the history says about this event: `true` when it was already recorded (a redelivery),
   * `false` when it is new. Only consulted for an event older than every key in `recentSeqs`, the one
   * case the row alone cannot tell; without it such an event counts as new.
   */
  seenBefore?: boolean;
}

/**
 * Merges one event into a row. Pure, idempotent (`apply(apply(r, e), e)` equals `apply(r, e)`) and
 * order-insensitive: any permutation of a set of events, with any duplicates, ends in the same row as
 * applying them in order of (normalised Timestamp, EventId). That is what makes redelivery and late
 * delivery harmless without a transaction.
 *
 * - `last*` fields follow the newest event; an older (late) event never moves them back.
 * - `fieldValues`/`values` come from the newest event that carried them.
 * - `changedFields` are the fields named by changed/softdeleted events newer than `fieldValues`.
 * - status: `deleted` once any deleted event is seen (final); otherwise `softdeleted` when the newest
 *   event is a softdeleted one, else `active` (a newer created/changed means the row was restored).
 *
 * Returns the same object when the event is already part of the row.
 *
 * @example
 * const row = [created, changed].reduce<Row | undefined>(apply, undefined)!;
 * row.changedFields; // the fields `changed` named, stale in row.fieldValues
 */
export function apply(row: Row | undefined, event: RowEvent, options: ApplyOptions = {}): Row {
  const seq = eventSeq(event);
  if (row === undefined) return merge(emptyRow(event, seq), event, seq);
  if (row.lastSeq === seq || row.recentSeqs.includes(seq)) return row;
  const oldest = row.recentSeqs[0];
  const olderThanWindow = row.recentSeqs.length >= RECENT_WINDOW && oldest !== undefined && seq < oldest;
  if (olderThanWindow && options.seenBefore === true) {
    // Merged long ago (history has it) — or its first attempt failed between history and row write;
    // merging again is harmless either way, counting it again is not.
    return sameRow(row, merge(row, event, seq, false));
  }
  return merge(row, event, seq);
}

function emptyRow(event: RowEvent, seq: string): Row {
  return {
    context: event.ContextIdentifier,
    entity: event.Entity,
    primaryKey: event.PrimaryKey,
    status: 'active',
    changedFields: [],
    changedFieldSeqs: {},
    lastEventId: event.EventId,
    lastEvent: event.Event,
    lastTimestamp: event.Timestamp,
    lastSeq: seq,
    changedByAssociateId: event.ChangedByAssociateId,
    eventCount: 0,
    recentSeqs: [],
  };
}

function merge(row: Row, event: RowEvent, seq: string, count = true): Row {
  const next: Row = { ...row, eventCount: row.eventCount + (count ? 1 : 0) };
  const newest = seq >= row.lastSeq;
  if (newest) {
    next.lastEventId = event.EventId;
    next.lastEvent = event.Event;
    next.lastTimestamp = event.Timestamp;
    next.lastSeq = seq;
    next.changedByAssociateId = event.ChangedByAssociateId;
  }

  let changedFieldSeqs = row.changedFieldSeqs;
  if (event.FieldValues !== undefined && (row.fieldValuesSeq === undefined || seq > row.fieldValuesSeq)) {
    next.fieldValues = event.FieldValues;
    next.fieldValuesTimestamp = event.Timestamp;
    next.fieldValuesSeq = seq;
    changedFieldSeqs = Object.fromEntries(Object.entries(changedFieldSeqs).filter(([, at]) => at > seq));
  }
  if (event.Values !== undefined && (row.valuesSeq === undefined || seq > row.valuesSeq)) {
    next.values = event.Values;
    next.valuesSeq = seq;
  }
  if (event.Event.endsWith('.changed') || event.Event === 'contact.softdeleted') {
    const fresh = next.fieldValuesSeq;
    for (const field of event.Changes) {
      const at = changedFieldSeqs[field];
      if ((fresh === undefined || seq > fresh) && (at === undefined || seq > at)) {
        changedFieldSeqs = { ...changedFieldSeqs, [field]: seq };
      }
    }
  }
  next.changedFieldSeqs = changedFieldSeqs;
  next.changedFields = Object.keys(changedFieldSeqs).sort();

  if (event.Event.endsWith('.created')) next.createdAt = earlier(row.createdAt, event.Timestamp);
  if (event.Event === 'contact.softdeleted') next.softDeletedAt = later(row.softDeletedAt, event.Timestamp);
  if (event.Event.endsWith('.deleted')) next.deletedAt = earlier(row.deletedAt, event.Timestamp);
  next.status = statusOf(next);

  next.recentSeqs = [...row.recentSeqs, seq].sort().slice(-RECENT_WINDOW);
  return next;
}

function statusOf(row: Row): RowStatus {
  if (row.deletedAt !== undefined) return 'deleted';
  return row.lastEvent === 'contact.softdeleted' ? 'softdeleted' : 'active';
}

function earlier(current: string | undefined, timestamp: string): string {
  return current === undefined || compareTimestamps(timestamp, current) < 0 ? timestamp : current;
}

function later(current: string | undefined, timestamp: string): string {
  return current === undefined || compareTimestamps(timestamp, current) > 0 ? timestamp : current;
}

/** Time order; the same instant written differently (6 or 7 digits) falls back to string order, so the result never depends on arrival. */
function compareTimestamps(a: string, b: string): number {
  const [x, y] = [normaliseTimestamp(a), normaliseTimestamp(b)];
  if (x !== y) return x < y ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `next` when it differs from `row` in anything stored, else `row` itself (so callers can skip the write). */
function sameRow(row: Row, next: Row): Row {
  return isDeepStrictEqual(row, next) ? row : next;
}
