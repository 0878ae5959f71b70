import { MAX_CHANGES_BYTES } from '../bus/limits.js';
import { type DeliveryEvent, familyOfEvent } from '../events/index.js';
import { fitsStore, MAX_STORED_BODY_BYTES } from '../store/body-codec.js';
import { MAX_PARTITION_KEY_BYTES, rowKey } from '../store/keys.js';

export type StoreMisfitReason = 'key-too-long' | 'too-large-for-store' | 'too-many-changes';

/**
 * Why a valid event can never be stored or published, or undefined when it can: a partition key built
 * from its strings over DynamoDB's limit (a WebhookName too long for a sort key is hashed instead: see
 * acceptedSk), a body over {@link MAX_STORED_BODY_BYTES} even deflated, or Changes over
 * {@link MAX_CHANGES_BYTES} as JSON (the most a bus entry carries twice, as Changes and
 * significantChanges). The ingest parks such an event (200) instead of letting a worker dead-letter
 * it. Details name the limit, not a value.
 */
export function storeMisfit(
  event: DeliveryEvent,
  body: string,
): { reason: StoreMisfitReason; detail: string } | undefined {
  const { entity } = familyOfEvent(event);
  // Rows and their history are keyed by rowKey; webhooks by the context alone.
  const partitionKey =
    entity === 'webhook'
      ? event.ContextIdentifier
      : rowKey(event.ContextIdentifier, entity, event.PrimaryKey);
  if (!fitsBytes(partitionKey, MAX_PARTITION_KEY_BYTES)) {
    return {
      reason: 'key-too-long',
      detail: `ContextIdentifier makes a partition key over DynamoDB's ${MAX_PARTITION_KEY_BYTES} bytes`,
    };
  }
  if (!fitsStore(body)) {
    return {
      reason: 'too-large-for-store',
      detail: `the body is over ${MAX_STORED_BODY_BYTES} bytes even deflated, more than one stored item holds`,
    };
  }
  if (!fitsChanges(event.Changes, body)) {
    return {
      reason: 'too-many-changes',
      detail: `Changes is over ${MAX_CHANGES_BYTES} bytes as JSON, more than the workers publish with one event`,
    };
  }
  return undefined;
}

/**
 * True when the Changes, written as JSON, take at most {@link MAX_CHANGES_BYTES}: counted only for a
 * body that could hold more (written by value, the Changes are never longer than their delivered text).
 */
function fitsChanges(changes: readonly string[], body: string): boolean {
  return (
    fitsBytes(body, MAX_CHANGES_BYTES) || Buffer.byteLength(JSON.stringify(changes)) <= MAX_CHANGES_BYTES
  );
}

/** UTF-8 length at most `limit`, counted only when 3 bytes per UTF-16 unit could exceed it. */
function fitsBytes(value: string, limit: number): boolean {
  return value.length * 3 <= limit || Buffer.byteLength(value) <= limit;
}
