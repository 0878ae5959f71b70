import type { RowEvent, WebhookState, WebhookStateName } from '../events/index.js';

export type RowEntity = RowEvent['Entity'];

/** `active` until soft- or permanently deleted; `deleted` is final. Action events never change it. */
export type RowStatus = 'active' | 'softdeleted' | 'deleted';

/**
 * The projection of one contact or activity row, a pure function of the set of events seen for it
 * (see lib/projection.ts and docs/workers.md for the exact rules).
 *
 * Fields ending in `Seq` are order keys (`normalisedTimestamp#EventId`) kept so that a late event can
 * be merged without a read of the history; they are bookkeeping, not data.
 */
export interface Row {
  context: string;
  entity: RowEntity;
  primaryKey: number;
  status: RowStatus;
  /** FieldValues of the newest event that carried them (created events), as `JSON.parse` reads them. */
  fieldValues?: Record<string, unknown>;
  /** The same FieldValues exactly as delivered (JSON text): what the store keeps, every digit intact. */
  fieldValuesJson?: string;
  fieldValuesTimestamp?: string;
  fieldValuesSeq?: string;
  /** Values of the newest event that carried them (deleted events), as `JSON.parse` reads them. */
  values?: Record<string, unknown>;
  /** The same Values exactly as delivered (JSON text). */
  valuesJson?: string;
  valuesSeq?: string;
  /** Fields named by changed, softdeleted and action events newer than `fieldValues`: those values are stale. Sorted. */
  changedFields: string[];
  /**
   * For each field of `changedFields`, the order key of the newest event that named it. Keyed by
   * delivered names: a null-prototype record (`fieldRecord`), so `constructor` is a field like any other.
   */
  changedFieldSeqs: Record<string, string>;
  lastEventId: string;
  lastEvent: RowEvent['Event'];
  /** The newest event's Timestamp exactly as the sender wrote it. */
  lastTimestamp: string;
  lastSeq: string;
  changedByAssociateId: number;
  /**
   * Distinct events recorded for the row (late ones included; duplicates, resends and conflicting
   * deliveries not). A retry whose history record was already there recounts the history.
   */
  eventCount: number;
  /** Order key of the newest event that set `status` (created, changed, softdeleted); bookkeeping. */
  statusSeq?: string;
  /** Timestamp of the oldest created event seen. */
  createdAt?: string;
  /** Timestamp of the newest softdeleted event seen (kept after a restore, so nothing is hidden). */
  softDeletedAt?: string;
  /** Timestamp of the oldest deleted event seen. */
  deletedAt?: string;
  /**
   * When the row's personal data was erased on request (docs/privacy.md): from then on no event brings
   * data back into it. A row erased on the CRM's hard delete (ERASE_ON_DELETE) has none: its deleted
   * status says it.
   */
  erasedAt?: string;
  /** Order keys of the newest events merged (at most RECENT_WINDOW), ascending: exact duplicate detection. */
  recentSeqs: string[];
  /** Content hash (body minus EventId) of each event of `recentSeqs` that has one: tells resends and conflicts from duplicates. */
  contentHashes?: Record<string, string>;
}

/** One accepted event in a row's history (events table), oldest first when listed. */
export interface EventRecord {
  context: string;
  entity: RowEntity | 'webhook';
  primaryKey: number;
  seq: string;
  eventId: string;
  eventName: string;
  timestamp: string;
  changedByAssociateId: number;
  /** Changed by one of IGNORE_ASSOCIATE_IDS: the integration's own write coming back. */
  echo: boolean;
  signatureVerified?: boolean;
  receivedAt?: string;
  recordedAt: string;
  /** Epoch seconds; DynamoDB's TTL removes the record after EVENT_RETENTION_DAYS. */
  expiresAt: number;
  /** The event as delivered (parsed JSON body). */
  payload: Record<string, unknown>;
  /** The delivery body exactly as received. */
  body: string;
  /** A delivery with the EventId of the event at this order key but another content: kept, not merged. */
  conflictOf?: string;
  /** The same change resent under a new EventId (the sender's next cycle): kept, not merged, not counted. */
  resendOf?: string;
  /**
   * Merged while events are published: a redelivery (or a redrive from the DLQ) of this event publishes
   * it, whatever its receive count, unless the worker instance remembers publishing it (the flag is
   * never cleared: no second write per event; docs/workers.md).
   */
  unpublished?: boolean;
  /**
   * Of a snapshot (`<entity>.reconciled`, recorded only when it changed the row): the FieldValues
   * fields whose value it changed, sorted (empty when it changed only the status or stale fields).
   */
  changed?: string[];
  /**
   * Its personal data erased (docs/privacy.md): `body` and `payload` keep only the envelope's identity
   * and order, and `contentHash` is the hash of the body it had (see `contentHash`, lib/recognition.ts).
   */
  erased?: true;
  contentHash?: string;
}

/** A history record before the store stamps it. */
export type NewEventRecord = Omit<EventRecord, 'recordedAt' | 'expiresAt' | 'body'> & {
  /** The delivery body exactly as received; what the store keeps (compressed). Defaults to `payload` as JSON. */
  body?: string;
};

/** One state event of a webhook, kept in the webhook item: the input of gaps and stateChangedAt. */
export interface StateTransition {
  seq: string;
  eventId: string;
  timestamp: string;
  state: WebhookState;
  /**
   * For a non-Active state: where a gap it opens starts, captured when the event was first merged —
   * the last row event accepted for the context (under the same WebhookName) if older than this event,
   * else this event's Timestamp.
   */
  gapFrom?: string;
}

export interface Webhook {
  context: string;
  webhookId: number;
  webhookName: string;
  state: WebhookState;
  stateName: WebhookStateName;
  /**
   * The registration fields below come from the newest state event that carried FieldValues; all are
   * absent while no event did (CRM versions older than FieldValues).
   */
  /** FieldValues.state as the sender reported it; recorded, never trusted (see the spec's samples). */
  reportedState?: number;
  events?: number;
  registered?: string;
  registeredAssociateId?: number;
  updated?: string;
  updatedAssociateId?: number;
  /** Order key of the event the registration fields come from. */
  registrationSeq?: string;
  lastEventId: string;
  lastTimestamp: string;
  lastSeq: string;
  /** Timestamp of the state event that started the current state. */
  stateChangedAt: string;
  eventCount: number;
  /** Every state event seen, ascending by order key (at most MAX_TRANSITIONS, oldest dropped). */
  transitions: StateTransition[];
}

/** A window in which a webhook was not Active, so events may have been missed. */
export interface Gap {
  context: string;
  webhookId: number;
  webhookName: string;
  /** Re-fetch changes from here: the last event accepted before the webhook left Active. */
  openedAt: string;
  openedByEventId: string;
  /** Absent while the webhook is still not Active. */
  closedAt?: string;
  closedByEventId?: string;
}

/** The newest row event accepted for a context under one WebhookName (gap bookkeeping). */
export interface LastAccepted {
  seq: string;
  timestamp: string;
  eventId: string;
  /** The receiver's clock when the event arrived (the ingest's): against `timestamp`, the sender's clock. */
  receivedAt?: string;
}
