import { createHash } from 'node:crypto';
import { type DeliveryEvent, familyOfEvent } from '../events/index.js';
import type { QueueKey } from '../queue/port.js';
import type { EnvelopeView } from './envelope-view.js';

export interface Route {
  queue: QueueKey;
  groupId: string;
  deduplicationId: string;
}

/**
 * A valid FIFO MessageGroupId/MessageDeduplicationId (printable ASCII, at most 128 characters).
 * Anything else is replaced by a stable hash, so the same input always maps to the same id and
 * per-row ordering survives odd ContextIdentifiers.
 */
export function fifoId(value: string): string {
  return isFifoSafe(value) ? value : `sha256:${createHash('sha256').update(value).digest('hex')}`;
}

function isFifoSafe(value: string): boolean {
  if (value.length === 0 || value.length > 128) return false;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x21 || code > 0x7e) return false;
  }
  return true;
}

/** The row a body speaks of, as a group id: `ContextIdentifier:Entity:PrimaryKey` (`webhook` for state events). */
export function rowGroupId(context: string, entity: string, primaryKey: number | string): string {
  return fifoId(`${context}:${entity}:${primaryKey}`);
}

/**
 * Queue and FIFO keys of a validated event, from its registry family: ordering per row (group) and
 * deduplication by EventId.
 *
 * @example routeEvent(contactChanged) → { queue: 'contact', groupId: 'Cust1:contact:42', deduplicationId: EventId }
 * @example routeEvent(saleSold) → { queue: 'entities', groupId: 'Cust1:sale:7', deduplicationId: EventId }
 */
export function routeEvent(event: DeliveryEvent): Route {
  const family = familyOfEvent(event);
  return {
    queue: family.queue,
    groupId: rowGroupId(event.ContextIdentifier, family.entity, event.PrimaryKey),
    // A validated EventId is a GUID: always a valid deduplication id.
    deduplicationId: event.EventId,
  };
}

/**
 * Keys for a parked delivery: grouped with its row when the body names one (so a later replay keeps
 * order), deduplicated by the hash of the exact bytes (identical retries collapse, different bodies
 * never do).
 */
export function routeParked(raw: string | Uint8Array, view: EnvelopeView): Route {
  const groupId =
    view.context !== undefined && view.primaryKey !== undefined
      ? rowGroupId(view.context, view.entity ?? 'webhook', view.primaryKey)
      : 'parked';
  return { queue: 'parked', groupId, deduplicationId: createHash('sha256').update(raw).digest('hex') };
}
