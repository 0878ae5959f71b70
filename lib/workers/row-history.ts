/** A row's history: the record a delivery writes there, and what the records say of an event. */
import type { RowEvent } from '../events/index.js';
import type { EventRecord, Row } from '../model/types.js';
import { contentHash, type Recognition } from '../recognition.js';
import type { Delivery, Known } from './row-delivery.js';
import type { RowStore } from './rows.js';

/**
 * What the worker knows of an event: {@link Recognition} (from the history when the row cannot tell),
 * or `retry` when only its row write is missing (or unknown).
 */
export type Found = Exclude<Recognition, { kind: 'unknown' }> | { kind: 'retry' };

/** {@link recognise} for an event older than the row's window, from the row's history. */
export function recogniseInHistory(
  history: EventRecord[],
  event: RowEvent,
  seq: string,
  hash: string,
): Found {
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
export function recordHash(record: EventRecord): string {
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
export function countWithHistory(row: Row, history: EventRecord[]): number {
  const oldest = row.recentSeqs[0] ?? '';
  return countEvents(history.filter((record) => record.seq < oldest)) + row.recentSeqs.length;
}

/** A new event found already recorded: a retry when its record has the same content, else a conflict. */
export function repeatOf(earlier: EventRecord, delivery: Delivery): Found {
  return recordHash(earlier) === delivery.hash ? { kind: 'retry' } : { kind: 'conflict', of: delivery.seq };
}

/** The history record of the delivery: `extra` says what it is besides the event itself. */
export function record(
  store: RowStore,
  { event, meta, seq, body, hash, echo, erasing }: Delivery,
  { changes }: Known,
  extra: { seq?: string; conflictOf?: string; resendOf?: string; unpublished?: true },
): Promise<boolean> {
  return store.recordEvent({
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
}
