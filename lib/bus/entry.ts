/**
 * The event published on the bus for one applied change: built from the delivery body
 * *text*, so the envelope's fields reach the bus byte for byte (a FieldValues long above 2^53 keeps
 * its digits), plus what the receiver knows after the write.
 */

import { EnvelopeSchema } from '../events/envelope.js';
import { JsonText, objectMembers, stringifyExact } from '../json-text.js';
import type { Row, Webhook } from '../model/types.js';
import type { AddedDetail, RowSnapshot, WebhookSnapshot } from './detail-schema.js';
import { EntryTooLargeError } from './errors.js';
import { MAX_DETAIL_DEPTH, MAX_ENTRY_BYTES, nestingDepth } from './limits.js';

export type { RowSnapshot, WebhookSnapshot } from './detail-schema.js';
export { MAX_CHANGES_BYTES, MAX_DETAIL_DEPTH, MAX_ENTRY_BYTES } from './limits.js';

/** `source` of every published event. */
export const SOURCE = 'crm-webhook-receiver';
/** Changes that say nothing about the data (BOOKKEEPING_FIELDS replaces the list; `x*` is a prefix). */
export const DEFAULT_BOOKKEEPING_FIELDS: readonly string[] = [
  'updated',
  'updated_associate_id',
  'updatedCount',
  'registered',
  'registered_associate_id',
  'dbi_*',
];

/**
 * What an entry over {@link MAX_ENTRY_BYTES}, or nested deeper than {@link MAX_DETAIL_DEPTH}, leaves
 * out, one part after the other until it fits; its
 * `dropped` lists those it left out, in this order. The row's own lists go first (the row can be
 * read again), then what the delivery carried beside the envelope (`customProperties`: every
 * top-level field the envelope does not name), then the WebhookName; Changes and significantChanges
 * go last, and never for a delivery the ingest accepts ({@link MAX_CHANGES_BYTES}).
 */
export const DROPPED_WHEN_TRUNCATED = [
  'row.changedFields',
  'row.fieldValues',
  'FieldValues',
  'Values',
  'customProperties',
  'WebhookName',
  'significantChanges',
  'Changes',
] as const;

export type DroppedPart = (typeof DROPPED_WHEN_TRUNCATED)[number];

/** What a truncated entry adds; a delivered top-level field of these names never reaches the bus. */
const TRUNCATION_MARKS = ['truncated', 'dropped'] as const;

/** The envelope's fields: strings and safe integers, written by value in a truncated entry. */
const ENVELOPE_FIELDS: ReadonlySet<string> = new Set([...Object.keys(EnvelopeSchema.shape), 'Entity']);

/** A PutEvents entry without the bus name (the publisher adds it). */
export interface BusEntry {
  Source: string;
  DetailType: string;
  /** JSON text. */
  Detail: string;
}

/** What the worker knows once the change is written; `body` is the delivery exactly as received. */
export type AppliedEvent = {
  body: string;
  seq: string;
  outcome: AddedDetail['outcome'];
  echo: boolean;
  /** The fields it changed when its body's Changes cannot say: a snapshot's difference from the row. */
  changes?: readonly string[];
} & ({ row: RowSnapshot } | { webhook: WebhookSnapshot });

/** Whether a changed field is bookkeeping; see {@link DEFAULT_BOOKKEEPING_FIELDS}. */
export type FieldFilter = (field: string) => boolean;

/** A filter for names and `prefix*` patterns, e.g. `bookkeepingFilter(DEFAULT_BOOKKEEPING_FIELDS)`. */
export function bookkeepingFilter(fields: readonly string[]): FieldFilter {
  const exact = new Set(fields.filter((field) => !field.endsWith('*')));
  const prefixes = fields.filter((field) => field.endsWith('*')).map((field) => field.slice(0, -1));
  return (field) => exact.has(field) || prefixes.some((prefix) => field.startsWith(prefix));
}

/** The snapshot of a stored row that the published event carries. */
export function rowSnapshot(row: Row): RowSnapshot {
  const { status, fieldValues, changedFields, lastEventId, lastTimestamp } = row;
  return { status, fieldValues, changedFields, lastEventId, lastTimestamp };
}

/** The snapshot of a stored webhook; `gap` is its open gap window, if any. */
export function webhookSnapshot(
  webhook: Webhook,
  gap?: { openedAt: string; openedByEventId: string },
): WebhookSnapshot {
  const open =
    gap === undefined ? undefined : { openedAt: gap.openedAt, openedByEventId: gap.openedByEventId };
  return { state: webhook.state, stateName: webhook.stateName, gap: open };
}

/**
 * The bus entry of an applied event: detail-type = the body's Event; detail = the body's top-level
 * fields as delivered, then significantChanges, seq, outcome, echo and row (or webhook). Over
 * {@link MAX_ENTRY_BYTES} or nested deeper than {@link MAX_DETAIL_DEPTH} (a FieldValues or custom
 * property the bus would refuse as MalformedDetail), the parts of {@link DROPPED_WHEN_TRUNCATED} are left out in that order until
 * it fits, with `truncated: true` and `dropped` naming them; the envelope's fields it keeps are then
 * written by value (the same strings and integers, without whatever padding the sender's text had).
 * Still over without all of them, it throws {@link EntryTooLargeError}. A delivered top-level field
 * named like one of the added ones (`seq`, `row`, …) is replaced by it; one named `truncated` or
 * `dropped` is left out of every entry, truncated or not.
 *
 * @example
 * buildEntry({ body, seq, outcome: 'applied', echo: false, row: rowSnapshot(row) }, bookkeepingFilter(DEFAULT_BOOKKEEPING_FIELDS))
 */
export function buildEntry(event: AppliedEvent, isBookkeeping: FieldFilter): BusEntry {
  const delivered = objectMembers(event.body);
  // The receiver's marks only: a delivered `truncated: true` would tell consumers a whole entry was cut.
  for (const mark of TRUNCATION_MARKS) delivered.delete(mark);
  const detailType = String(parseMember(delivered, 'Event'));
  const changes = event.changes ?? parseMember(delivered, 'Changes');
  const added: AddedDetail = {
    significantChanges: (Array.isArray(changes) ? changes : []).filter(
      (field) => typeof field === 'string' && !isBookkeeping(field),
    ),
    seq: event.seq,
    outcome: event.outcome,
    echo: event.echo,
    ...('row' in event ? { row: event.row } : { webhook: event.webhook }),
  };
  const full = entryOf(detailType, delivered, added);
  if (fits(full)) return full;

  const members = new Map(
    [...delivered].map(([key, text]) => [key, ENVELOPE_FIELDS.has(key) ? byValue(text) : text]),
  );
  const dropped: DroppedPart[] = [];
  let bytes = entrySize(full);
  for (const part of DROPPED_WHEN_TRUNCATED) {
    if (!leaveOut(part, members, added)) continue;
    dropped.push(part);
    const truncated = entryOf(detailType, members, { ...added, truncated: true, dropped });
    bytes = entrySize(truncated);
    if (fits(truncated)) return truncated;
  }
  throw new EntryTooLargeError(String(parseMember(delivered, 'EventId')), bytes);
}

/** Within both of PutEvents' limits on an entry: its size and how deep its Detail nests. */
function fits(entry: BusEntry): boolean {
  return entrySize(entry) <= MAX_ENTRY_BYTES && nestingDepth(entry.Detail) <= MAX_DETAIL_DEPTH;
}

function entryOf(detailType: string, members: ReadonlyMap<string, string>, added: object): BusEntry {
  const detail = { ...Object.fromEntries([...members].map(([k, v]) => [k, new JsonText(v)])), ...added };
  return { Source: SOURCE, DetailType: detailType, Detail: stringifyExact(detail) };
}

/** Leaves `part` out of the entry; false when the entry does not have it (nothing to leave out). */
function leaveOut(part: DroppedPart, members: Map<string, string>, added: AddedDetail): boolean {
  const { row } = added;
  switch (part) {
    case 'row.changedFields':
      if (row?.changedFields === undefined || row.changedFields.length === 0) return false;
      added.row = { ...row, changedFields: undefined };
      return true;
    case 'row.fieldValues':
      if (row?.fieldValues === undefined) return false;
      added.row = { ...row, fieldValues: undefined };
      return true;
    case 'significantChanges':
      return delete added.significantChanges;
    case 'customProperties': {
      const custom = [...members.keys()].filter(
        (key) => !ENVELOPE_FIELDS.has(key) && key !== 'FieldValues' && key !== 'Values',
      );
      for (const key of custom) members.delete(key);
      return custom.length > 0;
    }
    default:
      return members.delete(part);
  }
}

/** A JSON text written again from its value: `1.0e1` is `10`, `"\u0061"` is `"a"`. */
function byValue(text: string): string {
  return JSON.stringify(JSON.parse(text));
}

/**
 * An entry's size as EventBridge counts it: the UTF-8 bytes of Source, DetailType, Detail and each
 * resource, plus 14 for Time when set.
 */
export function entrySize(entry: BusEntry & { Resources?: string[]; Time?: Date }): number {
  const bytes = (text: string) => Buffer.byteLength(text, 'utf8');
  return (
    (entry.Time === undefined ? 0 : 14) +
    bytes(entry.Source) +
    bytes(entry.DetailType) +
    bytes(entry.Detail) +
    (entry.Resources ?? []).reduce((sum, resource) => sum + bytes(resource), 0)
  );
}

function parseMember(members: Map<string, string>, key: string): unknown {
  const text = members.get(key);
  return text === undefined ? undefined : JSON.parse(text);
}
