import {
  type EventEffect,
  familyOf,
  familyOfEvent,
  isDeletedSnapshot,
  normaliseTimestamp,
  type RowEvent,
  STATUS_EFFECTS,
} from './events/index.js';
import { fieldRecord } from './field-record.js';
import { objectMembers } from './json-text.js';
import { eventSeq } from './model/order-key.js';
import type { Row } from './model/types.js';
import { olderThanWindow, RECENT_WINDOW } from './recognition.js';

export interface ApplyOptions {
  /**
   * What the history says about this event: `true` when it was already recorded (a redelivery),
   * `false` when it is new. Only consulted for an event older than every key in `recentSeqs`, the one
   * case the row alone cannot tell; without it such an event counts as new.
   */
  seenBefore?: boolean;
  /**
   * The row's `eventCount` once this event is merged, when the caller counted it from the history
   * (a retry whose history record was already there); by default one more than the row's.
   */
  eventCount?: number;
  /** The event's content hash (recognition.ts), kept for the recent window. */
  contentHash?: string;
  /** FieldValues and Values exactly as delivered (JSON text); default: the parsed ones re-serialised. */
  json?: { FieldValues?: string; Values?: string };
  /**
   * The event is in the row's history already: a snapshot is then merged even when it changes
   * nothing, so that `eventCount` stays the number of events the history records.
   */
  recorded?: boolean;
}

/**
 * Merges one event into a row. Pure, idempotent (`apply(apply(r, e), e)` equals `apply(r, e)`) and
 * order-insensitive: any permutation of a set of events, with any duplicates, ends in the same row as
 * applying them in order of (normalised Timestamp, EventId). That is what makes redelivery and late
 * delivery harmless without a transaction.
 *
 * - `last*` fields follow the newest event; an older (late) event never moves them back.
 * - `fieldValues`/`values` come from the newest event that carried them.
 * - `changedFields` are the fields named by changed, softdeleted and action events newer than
 *   `fieldValues`.
 * - status: `deleted` once any deleted event is seen (final); otherwise that of the newest event with
 *   a status (created, changed, softdeleted): `softdeleted` after a softdeleted one, else `active` (a
 *   newer created/changed means the row was restored). Action events (sale.sold, person.consented)
 *   leave it alone.
 * - the effect of an event comes from its registry family (lib/events/registry.ts).
 * - a `<entity>.reconciled` snapshot is ordered at its fetch time (its Timestamp): it brings
 *   FieldValues and the `active` status like a created event (`softdeleted` when its FieldValues say
 *   `deleted` 1, for contact and person), or ends the row (`Deleted: true`); one
 *   that changes nothing a reader sees ({@link snapshotDiff}) is not merged as an event: only the
 *   order keys of the row's FieldValues and status move to F (the same row when they are there).
 *
 * Returns the same object when the event is already part of the row.
 *
 * @example
 * const row = [created, changed].reduce<Row | undefined>(apply, undefined)!;
 * row.changedFields; // the fields `changed` named, stale in row.fieldValues
 */
export function apply(row: Row | undefined, event: RowEvent, options: ApplyOptions = {}): Row {
  const seq = eventSeq(event);
  if (row === undefined) return merge(emptyRow(event, seq), event, seq, options);
  if (row.lastSeq === seq || row.recentSeqs.includes(seq)) return row;
  let next: Row;
  if (options.eventCount !== undefined) next = sameRow(row, merge(row, event, seq, options));
  else if (olderThanWindow(row, seq) && options.seenBefore === true) {
    // Merged long ago (history has it): merging again is harmless, counting it again is not.
    next = sameRow(row, merge(row, event, seq, { ...options, eventCount: row.eventCount }));
  } else next = merge(row, event, seq, options);
  // A snapshot that changes nothing a reader sees is not merged as an event (not counted, not in the
  // window, not last): it only moves the order keys of the row's FieldValues and status to F, so an
  // older answer arriving later cannot replace them (the CRM's values may have changed and back).
  const unchanged = next !== row && options.recorded !== true && isSnapshot(event);
  return unchanged && !snapshotDiff(row, next).changed ? confirmed(row, next) : next;
}

/** `row` with the FieldValues and status order keys of `next` (a snapshot that confirmed them), or `row` itself when they are the same. */
function confirmed(row: Row, next: Row): Row {
  const { fieldValuesSeq, fieldValuesTimestamp, statusSeq } = next;
  if (fieldValuesSeq === row.fieldValuesSeq && statusSeq === row.statusSeq) return row;
  return {
    ...row,
    ...(fieldValuesSeq !== undefined && { fieldValuesSeq, fieldValuesTimestamp }),
    ...(statusSeq !== undefined && { statusSeq }),
  };
}

/** What merging a `<entity>.reconciled` snapshot did to a row (see {@link snapshotDiff}). */
export interface SnapshotDiff {
  /** Anything a reader sees moved: a field's value, the status, the stale fields, `deletedAt`. */
  changed: boolean;
  /** The FieldValues fields whose exact text differs (or that one side lacks), sorted. */
  fields: string[];
}

/**
 * The difference between a row and the row a snapshot made of it: the fields whose value changed
 * (compared as the exact JSON text the CRM and the webhooks wrote, so a long keeps its digits), and
 * whether anything else a reader sees moved. One pass over the fields of each side.
 */
export function snapshotDiff(before: Row | undefined, after: Row): SnapshotDiff {
  const was = before?.fieldValuesJson;
  const is = after.fieldValuesJson;
  const fields: string[] = [];
  if (was !== is) {
    const old = was === undefined ? new Map<string, string>() : objectMembers(was);
    const now = is === undefined ? new Map<string, string>() : objectMembers(is);
    for (const [field, text] of now) if (old.get(field) !== text) fields.push(field);
    for (const field of old.keys()) if (!now.has(field)) fields.push(field);
    fields.sort();
  }
  const changed =
    before === undefined ||
    fields.length > 0 ||
    before.status !== after.status ||
    before.deletedAt !== after.deletedAt ||
    before.changedFields.join('\n') !== after.changedFields.join('\n');
  return { changed, fields };
}

function isSnapshot(event: RowEvent): boolean {
  return familyOfEvent(event).effect === 'reconciled';
}

function emptyRow(event: RowEvent, seq: string): Row {
  return {
    context: event.ContextIdentifier,
    entity: event.Entity,
    primaryKey: event.PrimaryKey,
    status: 'active',
    changedFields: [],
    changedFieldSeqs: fieldRecord(),
    lastEventId: event.EventId,
    lastEvent: event.Event,
    lastTimestamp: event.Timestamp,
    lastSeq: seq,
    changedByAssociateId: event.ChangedByAssociateId,
    eventCount: 0,
    recentSeqs: [],
  };
}

function merge(row: Row, event: RowEvent, seq: string, options: ApplyOptions): Row {
  const next: Row = { ...row, eventCount: options.eventCount ?? row.eventCount + 1 };
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
    next.fieldValuesJson = options.json?.FieldValues ?? JSON.stringify(event.FieldValues);
    next.fieldValuesTimestamp = event.Timestamp;
    next.fieldValuesSeq = seq;
    changedFieldSeqs = fieldRecord(Object.entries(changedFieldSeqs).filter(([, at]) => at > seq));
  }
  if (event.Values !== undefined && (row.valuesSeq === undefined || seq > row.valuesSeq)) {
    next.values = event.Values;
    next.valuesJson = options.json?.Values ?? JSON.stringify(event.Values);
    next.valuesSeq = seq;
  }
  const effect = snapshotEffect(event) ?? familyOfEvent(event).effect;
  const fresh = next.fieldValuesSeq;
  if (NAMES_STALE_FIELDS.has(effect) && (fresh === undefined || seq > fresh)) {
    // One copy into a map, one pass over Changes: linear in the fields, whatever a field is named.
    const seqs = new Map(Object.entries(changedFieldSeqs));
    for (const field of event.Changes) {
      const at = seqs.get(field);
      if (at === undefined || seq > at) seqs.set(field, seq);
    }
    changedFieldSeqs = fieldRecord(seqs);
  }
  next.changedFieldSeqs = changedFieldSeqs;
  next.changedFields = Object.keys(changedFieldSeqs).sort();

  if (effect === 'created') next.createdAt = earlier(row.createdAt, event.Timestamp);
  if (effect === 'softdeleted') next.softDeletedAt = later(row.softDeletedAt, event.Timestamp);
  if (effect === 'deleted') next.deletedAt = earlier(row.deletedAt, event.Timestamp);
  const statusSeq = statusSeqOf(row);
  if (STATUS_EFFECTS.has(effect) && (statusSeq === undefined || seq > statusSeq)) {
    next.statusSeq = seq;
    next.status = effect === 'softdeleted' ? 'softdeleted' : 'active';
  }
  if (next.deletedAt !== undefined) next.status = 'deleted';

  next.recentSeqs = [...row.recentSeqs, seq].sort().slice(-RECENT_WINDOW);
  if (options.contentHash !== undefined || row.contentHashes !== undefined) {
    const hashes = { ...row.contentHashes, ...(options.contentHash && { [seq]: options.contentHash }) };
    next.contentHashes = Object.fromEntries(
      next.recentSeqs.flatMap((kept) => (hashes[kept] ? [[kept, hashes[kept]]] : [])),
    );
  }
  return next;
}

/**
 * What a snapshot does to the status as a live event would have: a row the CRM no longer has ends
 * as a deleted event ends it; a row it holds soft-deleted (FieldValues `deleted` 1, for an entity with
 * soft deletes: contact, person) is soft-deleted, as the lost `softdeleted` event would have made it.
 * Undefined for any other event (its family's effect).
 */
function snapshotEffect(event: RowEvent): EventEffect | undefined {
  if (isDeletedSnapshot(event)) return 'deleted';
  if (!isSnapshot(event)) return undefined;
  const deleted = (event.FieldValues as Record<string, unknown> | undefined)?.deleted;
  const softDeletes = familyOf(`${event.Entity}.softdeleted`)?.effect === 'softdeleted';
  return softDeletes && (deleted === 1 || deleted === true) ? 'softdeleted' : undefined;
}

/** Effects whose Changes name fields that are stale in `fieldValues` from then on. */
const NAMES_STALE_FIELDS: ReadonlySet<EventEffect> = new Set(['changed', 'softdeleted', 'action']);

/**
 * Order key of the newest event that set the row's status. A row stored before `statusSeq` existed
 * held only the spec's events, all of which set the status: its newest event did.
 */
function statusSeqOf(row: Row): string | undefined {
  if (row.statusSeq !== undefined || row.eventCount === 0) return row.statusSeq;
  return STATUS_EFFECTS.has(familyOfLastEvent(row)) ? row.lastSeq : undefined;
}

function familyOfLastEvent(row: Row): EventEffect {
  return familyOf(row.lastEvent)?.effect ?? 'action';
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

/**
 * `next` when it differs from `row` in anything stored, else `row` itself (so callers can skip the
 * write). A row is JSON data and `merge` writes `next`'s keys in `row`'s order, so their JSON texts
 * are equal exactly when the stored rows are. (Not `util.isDeepStrictEqual`: importing `node:util`
 * into an ES module costs a worker's cold start about 4.7 M instructions, 2 % of its import.)
 */
function sameRow(row: Row, next: Row): Row {
  // FieldValues and Values compared by their text: a parsed value may be nested too deep to walk.
  const comparable = ({ fieldValues: _f, values: _v, ...rest }: Row) => JSON.stringify(rest);
  return comparable(row) === comparable(next) ? row : next;
}
