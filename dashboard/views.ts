import { WEBHOOK_STATE_NAMES } from '../lib/events/index.js';
import { JsonText } from '../lib/json-text.js';
import type { EventRecord, Row, RowEntity, Webhook } from '../lib/model/types.js';

/** The admin view of a row: what a person or a test wants to see, without the order bookkeeping. */
export interface RowView {
  context: string;
  entity: RowEntity;
  primaryKey: number;
  status: Row['status'];
  /** Exactly as delivered (every digit): {@link JsonText} when the row kept the text. */
  fieldValues: JsonText | Record<string, unknown> | null;
  values: JsonText | Record<string, unknown> | null;
  changedFields: string[];
  lastEventId: string;
  lastEvent: string;
  lastTimestamp: string;
  changedByAssociateId: number;
  eventCount: number;
}

export function toRowView(row: Row): RowView {
  return {
    context: row.context,
    entity: row.entity,
    primaryKey: row.primaryKey,
    status: row.status,
    fieldValues:
      row.fieldValuesJson !== undefined ? new JsonText(row.fieldValuesJson) : (row.fieldValues ?? null),
    values: row.valuesJson !== undefined ? new JsonText(row.valuesJson) : (row.values ?? null),
    changedFields: row.changedFields,
    lastEventId: row.lastEventId,
    lastEvent: row.lastEvent,
    lastTimestamp: row.lastTimestamp,
    changedByAssociateId: row.changedByAssociateId,
    eventCount: row.eventCount,
  };
}

/** A history record with its payload as the exact body received. */
export function toEventView({ body, ...record }: EventRecord) {
  return { ...record, payload: new JsonText(body) };
}

export function toWebhookView(webhook: Webhook) {
  return {
    context: webhook.context,
    webhookId: webhook.webhookId,
    webhookName: webhook.webhookName,
    state: webhook.state,
    stateName: webhook.stateName,
    reportedState: webhook.reportedState,
    events: webhook.events,
    registered: webhook.registered,
    registeredAssociateId: webhook.registeredAssociateId,
    updated: webhook.updated,
    updatedAssociateId: webhook.updatedAssociateId,
    lastEventId: webhook.lastEventId,
    lastTimestamp: webhook.lastTimestamp,
    stateChangedAt: webhook.stateChangedAt,
    // Each with its state's name, so the page takes the names from here (lib/events/states.ts).
    transitions: webhook.transitions.map((transition) => ({
      ...transition,
      stateName: WEBHOOK_STATE_NAMES[transition.state],
    })),
  };
}

export interface QueueView {
  key: string;
  name: string;
  visible: number;
  inFlight: number;
  delayed: number;
  dlq: number;
  dlqName: string;
}

export interface MessageView {
  messageId: string;
  groupId: string | undefined;
  deduplicationId: string | undefined;
  receiveCount: number;
  sentAt: string | undefined;
  inFlight: boolean;
  attributes: Record<string, string>;
  body: string;
}

/** A parked delivery: why it was parked and the exact body received. */
export interface ParkedView extends MessageView {
  /** The parked queue, or its DLQ (where a message goes after maxReceiveCount receives: looks on AWS). */
  where: 'parked' | 'dlq';
  reason: string | undefined;
  /** The body's Event and EventId where the body is a JSON object that has them, else as the headers named them. */
  event: string | undefined;
  eventId: string | undefined;
}

/**
 * A parked message for the Parked view (`GET /parked`). Its body is whatever was delivered (`null`,
 * an array, bytes that are not JSON), so the event and its id are read from it here, where a body that
 * does not have them falls back to the headers' (`event`, `eventId` attributes), never in the page.
 */
export function toParkedView(message: MessageView, where: ParkedView['where']): ParkedView {
  const envelope = jsonObject(message.body);
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  return {
    ...message,
    where,
    reason: message.attributes.reason,
    event: text(envelope?.Event) ?? message.attributes.event,
    eventId: text(envelope?.EventId) ?? message.attributes.eventId,
  };
}

function jsonObject(body: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** What the views read of a queued message: the local SQS emulator's messages have this shape. */
export interface PeekedMessage {
  messageId: string;
  body: string;
  inFlight: boolean;
  attributes: Record<string, string>;
  messageAttributes: Record<string, { StringValue?: string; BinaryValue?: string }>;
}

export function toMessageView(message: PeekedMessage): MessageView {
  const attributes: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.messageAttributes)) {
    attributes[name] = value.StringValue ?? value.BinaryValue ?? '';
  }
  const sent = Number(message.attributes.SentTimestamp);
  return {
    messageId: message.messageId,
    groupId: message.attributes.MessageGroupId,
    deduplicationId: message.attributes.MessageDeduplicationId,
    receiveCount: Number(message.attributes.ApproximateReceiveCount ?? 0),
    sentAt: Number.isFinite(sent) && sent > 0 ? new Date(sent).toISOString() : undefined,
    inFlight: message.inFlight,
    attributes,
    body: message.body,
  };
}
