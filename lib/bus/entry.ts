/**
 * The event published on the bus for one applied change (issue 14): built from the delivery body
 * *text*, so the envelope's fields reach the bus byte for byte (a FieldValues long above 2^53 keeps
 * its digits), plus what the receiver knows after the write.
 */

import { JsonText, objectMembers, stringifyExact } from '../json-text.js';
import type { Row, RowStatus, Webhook } from '../store/types.js';
import { EntryTooLargeError } from './errors.js';

/** `source` of every published event. */
export const SOURCE = 'crm-webhook-receiver';
/** EventBridge's limit on one PutEvents entry (and on one PutEvents call). */
export const MAX_ENTRY_BYTES = 256 * 1024;
/** Changes that say nothing about the data (BOOKKEEPING_FIELDS replaces the list; `x*` is a prefix). */
export const DEFAULT_BOOKKEEPING_FIELDS: readonly string[] = [
  'updated',
  'updated_associate_id',
  'updatedCount',
  'registered',
  'registered_associate_id',
  'dbi_*',
];
/** The envelope fields an oversized entry keeps (FieldValues, Values and custom properties go). */
const KEPT_WHEN_TRUNCATED = new Set([
  'EventId',
  'Event',
  'Entity',
  'PrimaryKey',
  'ContextIdentifier',
  'ChangedByAssociateId',
  'WebhookName',
  'Timestamp',
  'Changes',
]);

/** A PutEvents entry without the bus name (the publisher adds it). */
export interface BusEntry {
  Source: string;
  DetailType: string;
  /** JSON text. */
  Detail: string;
}

/** The row as now stored. `fieldValues` may be JSON text ({@link JsonText}) to keep exact digits. */
export interface RowSnapshot {
  status: RowStatus;
  fieldValues?: Record<string, unknown> | JsonText | undefined;
  changedFields: readonly string[];
  lastEventId: string;
  lastTimestamp: string;
}

/** The webhook as now stored, with its open gap when it is not Active. */
export interface WebhookSnapshot {
  state: number;
  stateName: string;
  gap?: { openedAt: string; openedByEventId: string } | undefined;
}

/** What the worker knows once the change is written; `body` is the delivery exactly as received. */
export type AppliedEvent = {
  body: string;
  seq: string;
  outcome: 'applied' | 'late';
  echo: boolean;
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
 * {@link MAX_ENTRY_BYTES}, the entry is rebuilt without FieldValues, Values, custom properties and
 * row.fieldValues, with `truncated: true`; still over, it throws {@link EntryTooLargeError}.
 * A delivered top-level field named like one of the added ones (`seq`, `row`, …) is replaced by it.
 *
 * @example
 * buildEntry({ body, seq, outcome: 'applied', echo: false, row: rowSnapshot(row) }, bookkeepingFilter(DEFAULT_BOOKKEEPING_FIELDS))
 */
export function buildEntry(event: AppliedEvent, isBookkeeping: FieldFilter): BusEntry {
  const delivered = objectMembers(event.body);
  const eventName = parseMember(delivered, 'Event');
  const changes = parseMember(delivered, 'Changes');
  const added = {
    significantChanges: (Array.isArray(changes) ? changes : []).filter(
      (field) => typeof field === 'string' && !isBookkeeping(field),
    ),
    seq: event.seq,
    outcome: event.outcome,
    echo: event.echo,
    ...('row' in event ? { row: event.row } : { webhook: event.webhook }),
  };
  const entry = (fields: Iterable<[string, string]>, extra: object): BusEntry => ({
    Source: SOURCE,
    DetailType: String(eventName),
    Detail: stringifyExact({
      ...Object.fromEntries([...fields].map(([k, v]) => [k, new JsonText(v)])),
      ...extra,
    }),
  });

  const full = entry(delivered, added);
  if (entrySize(full) <= MAX_ENTRY_BYTES) return full;
  const kept = [...delivered].filter(([key]) => KEPT_WHEN_TRUNCATED.has(key));
  const row = 'row' in added ? { row: { ...added.row, fieldValues: undefined } } : {};
  const truncated = entry(kept, { ...added, ...row, truncated: true });
  const bytes = entrySize(truncated);
  if (bytes > MAX_ENTRY_BYTES) throw new EntryTooLargeError(String(parseMember(delivered, 'EventId')), bytes);
  return truncated;
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
