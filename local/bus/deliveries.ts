import { randomUUID } from 'node:crypto';
import type { BusEntry } from '../../lib/bus/entry.js';
import { JsonText, stringifyExact } from '../../lib/json-text.js';
import { LIFECYCLE_TYPES } from '../../lib/reconcile/records/lifecycle.js';
import { TENANT_LIFECYCLE_TYPES } from '../../lib/tenants/lifecycle.js';
import type { JournalRecord } from '../emulators/sqs-journal.js';
import type { DeliveryView } from './views.js';

/**
 * What the local bus (local-bus.ts) keeps of each delivery of an event to a subscription, in memory and as
 * a record of its journal (journaled-queues.ts): the queue of a subscription is its name, its DLQ
 * `<name>.dlq`; the record's MessageId is `<subscription>/<event id>`, its body the event's JSON, its
 * attributes when PutEvents took it, the attempts made and, once dead-lettered, the last error.
 */
export interface Delivery {
  /** Its MessageId in the journal: `<subscription>/<event id>`. */
  key: string;
  text: string;
  eventId: string | undefined;
  detailType: string;
  /** A lifecycle event's tenant (`detail.context`): it has no EventId (lib/reconcile/records/lifecycle.ts). */
  context?: string | undefined;
  /** When PutEvents took it (ms): its age counts from here. */
  acceptedAt: number;
  attempts: number;
}

/** An entry as the bus publishes it: EventBridge's event id and JSON, and that JSON parsed for matching. */
export interface Published {
  id: string;
  text: string;
  parsed: { 'detail-type': string; detail?: { EventId?: unknown; context?: unknown } };
}

/** The JSON EventBridge sends to a target, with the entry's Detail text kept verbatim. */
export function wrap(entry: BusEntry, account: string, region: string): Published {
  const id = randomUUID();
  const text = stringifyExact({
    version: '0',
    id,
    'detail-type': entry.DetailType,
    source: entry.Source,
    account,
    time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region,
    resources: [],
    detail: new JsonText(entry.Detail),
  });
  return { id, text, parsed: JSON.parse(text) };
}

/** A new delivery of a published event to a subscription. */
export function deliveryOf(subscription: string, { id, text, parsed }: Published): Delivery {
  const eventId = parsed.detail?.EventId;
  const context = parsed.detail?.context;
  return {
    key: keyOf(subscription, id),
    text,
    eventId: typeof eventId === 'string' ? eventId : undefined,
    detailType: parsed['detail-type'],
    ...(isLifecycleType(parsed['detail-type']) && typeof context === 'string' && { context }),
    acceptedAt: Date.now(),
    attempts: 0,
  };
}

/** A delivery's MessageId in the journal; {@link idOf} gives the event id back. */
export const keyOf = (subscription: string, id: string) => `${subscription}/${id}`;
export const idOf = (delivery: Delivery) => delivery.key.slice(delivery.key.indexOf('/') + 1);
/** A subscription's DLQ in the journal (no subscription name has a dot). */
export const dlqOf = (subscription: string) => `${subscription}.dlq`;

/** The delivery as its journal record; with `deadLetter`, as the record of its subscription's DLQ. */
export function toRecord(delivery: Delivery, deadLetter?: { error: string; at: string }): JournalRecord {
  return {
    MessageId: delivery.key,
    MessageBody: delivery.text,
    attributes: {
      SentTimestamp: String(delivery.acceptedAt),
      ApproximateReceiveCount: String(delivery.attempts),
      DetailType: delivery.detailType,
      ...(delivery.eventId !== undefined && { EventId: delivery.eventId }),
      ...(delivery.context !== undefined && { Context: delivery.context }),
      ...deadLetter,
    },
  };
}

/** A delivery from its journal record (after a restart). */
export function fromRecord({ MessageId, MessageBody, attributes }: JournalRecord): Delivery {
  return {
    key: MessageId,
    text: MessageBody,
    eventId: attributes.EventId,
    detailType: attributes.DetailType ?? '',
    ...(attributes.Context !== undefined && { context: attributes.Context }),
    acceptedAt: Number(attributes.SentTimestamp),
    attempts: Number(attributes.ApproximateReceiveCount ?? 0),
  };
}

/** What the views show of a delivery. */
export function viewOf(delivery: Delivery): Omit<DeliveryView, 'at'> {
  const { eventId, detailType, attempts, context } = delivery;
  return { id: idOf(delivery), eventId, detailType, attempts, ...(context !== undefined && { context }) };
}

const isLifecycleType = (detailType: string) =>
  (LIFECYCLE_TYPES as readonly string[]).includes(detailType) ||
  (TENANT_LIFECYCLE_TYPES as readonly string[]).includes(detailType);
