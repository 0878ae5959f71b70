import { JsonText } from '../../lib/json-text.js';
import type { EventRecord, Row, RowEntity, Webhook } from '../../lib/store/types.js';
import type { StoredMessage } from './sqs-emulator.js';

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
    transitions: webhook.transitions,
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
  reason: string | undefined;
}

export function toMessageView(message: StoredMessage): MessageView {
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
