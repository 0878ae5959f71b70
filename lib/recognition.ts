import { createHash } from 'node:crypto';
import type { RowEvent } from './events/index.js';
import { eventSeq } from './model/order-key.js';
import type { Row } from './model/types.js';

/** How many of the newest order keys a row keeps for exact duplicate detection. */
export const RECENT_WINDOW = 8;

/** What the row alone can say about an event before it is recorded. */
export type Recognition =
  /** Not part of the row: record and merge it. */
  | { kind: 'new' }
  /** Already part of the row (same order key, same content). */
  | { kind: 'duplicate' }
  /** Its EventId is in the row with another content (`of`: the order key the row follows). */
  | { kind: 'conflict'; of: string }
  /** Its content is in the row under another EventId: the sender's resend (`of`: the first one). */
  | { kind: 'resend'; of: string }
  /** Older than every event of the row's window: only the history can tell. */
  | { kind: 'unknown' };

/**
 * Classifies an event against the row before it is recorded, by order key, EventId and content hash
 * within the row's window of {@link RECENT_WINDOW} newest events; `unknown` for an older event.
 */
export function recognise(row: Row | undefined, event: RowEvent, hash: string): Recognition {
  if (row === undefined) return { kind: 'new' };
  const seq = eventSeq(event);
  const hashes = row.contentHashes ?? {};
  for (const known of row.recentSeqs) {
    const sameId = known.endsWith(`#${event.EventId}`);
    const knownHash = hashes[known];
    if (known === seq && (knownHash === undefined || knownHash === hash)) return { kind: 'duplicate' };
    if (sameId) return { kind: 'conflict', of: known };
    if (knownHash === hash) return { kind: 'resend', of: known };
  }
  return olderThanWindow(row, seq) ? { kind: 'unknown' } : { kind: 'new' };
}

/**
 * Identity of a delivery's content: SHA-256 of the body with its EventId taken out, so the sender's
 * resend of a change under a new EventId has the same hash and a conflicting body another one.
 */
export function contentHash(body: string, eventId: string): string {
  return createHash('sha256').update(body.split(eventId).join('')).digest('base64url').slice(0, 16);
}

/**
 * True when `seq` is older than every event of the row's full recent window: the row alone can then
 * no longer tell whether that event was merged (the history can). Within the window it can.
 */
export function olderThanWindow(row: Row, seq: string): boolean {
  const oldest = row.recentSeqs[0];
  return row.recentSeqs.length >= RECENT_WINDOW && oldest !== undefined && seq < oldest;
}
