import { deletesRow, isErased } from '../erasure/project.js';
import { familyOfEvent, type RowEvent } from '../events/index.js';
import { jsonMembers } from '../json-text.js';
import { eventSeq } from '../model/order-key.js';
import type { EventRecord, Row } from '../model/types.js';
import type { ApplyOptions } from '../projection.js';
import { contentHash } from '../recognition.js';
import type { Versioned } from '../store/types.js';
import { barredFromBus } from './bus-decision.js';
import type { DeliveryMeta } from './record.js';
import type { Found } from './row-history.js';
import type { RowWorkerDeps } from './rows.js';

/** One delivery of a row event and its row as read: what every step of `processRowEvent` (rows.ts) reads. */
export interface Delivery {
  event: RowEvent;
  meta: DeliveryMeta;
  key: readonly [context: string, entity: string, primaryKey: number];
  seq: string;
  body: string;
  hash: string;
  echo: boolean;
  /** Its change may go on the bus ({@link barredFromBus}): its history record is written `unpublished`. */
  publishable: boolean;
  /** A snapshot is recorded, counted and published only when it changes the row. */
  snapshot: boolean;
  options: ApplyOptions;
  loaded: Versioned<Row>;
  /** The row is (or this event makes it) deleted and keeps no personal data: its records are written erased. */
  erasing: boolean;
}

/** What the worker knows of the event so far: how it was found, its earlier record, a snapshot's changes. */
export interface Known<F extends Found = Found> {
  found: F;
  earlier?: EventRecord | undefined;
  changes?: string[] | undefined;
}

/** The delivery of a row event, with its row as stored: read once, before the first step. */
export async function readRow(deps: RowWorkerDeps, event: RowEvent, meta: DeliveryMeta): Promise<Delivery> {
  const key = [event.ContextIdentifier, event.Entity, event.PrimaryKey] as const;
  const body = meta.rawBody ?? JSON.stringify(event);
  const hash = contentHash(body, event.EventId);
  const echo = deps.ignoreAssociateIds.has(event.ChangedByAssociateId);
  const loaded = await deps.store.loadRow(...key);
  return {
    event,
    meta,
    key,
    seq: eventSeq(event),
    body,
    hash,
    echo,
    publishable: barredFromBus(deps.publication, echo) === undefined,
    snapshot: familyOfEvent(event).effect === 'reconciled',
    options: {
      contentHash: hash,
      ...(meta.rawBody !== undefined && { json: jsonMembers(meta.rawBody, ['FieldValues', 'Values']) }),
    },
    loaded,
    erasing:
      (loaded.item !== undefined && isErased(loaded.item, deps.erasesOnDelete)) ||
      ((deps.erasesOnDelete?.(event.Entity) ?? false) && deletesRow(event)),
  };
}
