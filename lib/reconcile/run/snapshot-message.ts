import { createHash } from 'node:crypto';
import {
  type DeliveryEvent,
  parseDeliveryEvent,
  RECONCILE_ASSOCIATE_ID,
  RECONCILED_VERB,
  type ReconciledEvent,
} from '../../events/index.js';
import { routeEvent } from '../../ingest/routing.js';
import { storeMisfit } from '../../ingest/store-fit.js';
import { objectMembers } from '../../json-text.js';
import type { OutboundMessage } from '../../queue/port.js';

/** One row as the CRM's REST API answered for it, at the CRM's time `fetchedAt`. */
export type FetchedRow = {
  context: string;
  entity: string;
  primaryKey: number;
  /**
   * F: the CRM's clock when it answered (its Date header), never later than the fetch. The snapshot is
   * ordered at F: a live event newer than F wins over it.
   */
  fetchedAt: Date;
  /** The receiver's clock when the answer arrived; default `fetchedAt`. */
  receivedAt?: Date;
} & (
  | {
      /** The row's fields as the CRM wrote them: a JSON object text, so every digit is kept. */
      fieldValues: string;
      deleted?: undefined;
    }
  | {
      /** The CRM answered that the row no longer exists (404). */
      deleted: true;
      fieldValues?: undefined;
    }
);

/** A fetched row that cannot become a snapshot event (a bad argument, or a row the store cannot hold). */
export class SnapshotError extends Error {
  constructor(row: Pick<FetchedRow, 'context' | 'entity' | 'primaryKey'>, detail: string) {
    super(`snapshot of ${row.context}/${row.entity}/${row.primaryKey} not queued: ${detail}`);
    this.name = 'SnapshotError';
  }
}

/**
 * The SQS message of a `<entity>.reconciled` snapshot (lib/events/reconciled.ts): on the row's own
 * queue and FIFO group, routed by the ingest's {@link routeEvent}, so the row's workers apply it in
 * order with its live events. Its EventId (the deduplication id too) is {@link snapshotEventId}: the
 * same row fetched twice with the same answer at the same F is one message, one event. Throws
 * {@link SnapshotError} for anything the workers would refuse (unknown entity, FieldValues not a JSON
 * object) or the store could not hold.
 *
 * @example sqs.send(snapshotMessage({ context: 'Cust1', entity: 'contact', primaryKey: 42, fetchedAt, fieldValues: '{"name":"Acme"}' }))
 */
export function snapshotMessage(row: FetchedRow): OutboundMessage {
  return buildSnapshot(row).message;
}

/** A snapshot built once: its SQS message ({@link snapshotMessage}) and the event its body holds, as parsed to check it. */
export interface Snapshot {
  message: OutboundMessage & { body: string };
  event: DeliveryEvent;
}

/** {@link snapshotMessage} with the parsed event, so the run judges it against the stored row without parsing its body again. */
export function buildSnapshot(row: FetchedRow): Snapshot {
  const timestamp = row.fetchedAt.toISOString();
  let content = '"deleted"';
  if (row.deleted !== true) {
    try {
      objectMembers(row.fieldValues);
    } catch {
      throw new SnapshotError(row, 'fieldValues must be the text of a JSON object');
    }
    content = row.fieldValues;
  }
  const name = `${row.entity}.${RECONCILED_VERB}`;
  const eventId = snapshotEventId(row, timestamp, content);
  const head = JSON.stringify({
    EventId: eventId,
    Timestamp: timestamp,
    Changes: [],
    Event: name,
    PrimaryKey: row.primaryKey,
    ContextIdentifier: row.context,
    ChangedByAssociateId: RECONCILE_ASSOCIATE_ID,
    WebhookName: '',
    Entity: row.entity,
  }).slice(0, -1);
  const body = row.deleted === true ? `${head},"Deleted":true}` : `${head},"FieldValues":${content}}`;
  const parsed = parseDeliveryEvent(JSON.parse(body));
  if (!parsed.ok) throw new SnapshotError(row, `${parsed.reason}: ${parsed.detail}`);
  const misfit = storeMisfit(parsed.event, body);
  if (misfit !== undefined) throw new SnapshotError(row, misfit.detail);
  const message = {
    ...routeEvent(parsed.event),
    body,
    attributes: {
      event: name,
      eventId,
      receivedAt: (row.receivedAt ?? row.fetchedAt).toISOString(),
    },
  };
  return { message, event: parsed.event };
}

/**
 * A snapshot's EventId: a UUID-shaped SHA-256 of the row, F and the content exactly as the CRM wrote
 * it, with `00000000` as its first group. Deterministic, so fetching again (a reconcile retried after a
 * crash, overlapping windows) yields the same event, which SQS deduplicates for 5 minutes and the
 * worker after that (same order key, same content); another answer at the same F is another event.
 * The zero group orders it before any live event of the same Timestamp, so the live event wins a tie.
 */
export function snapshotEventId(
  row: Pick<FetchedRow, 'context' | 'entity' | 'primaryKey'>,
  timestamp: string,
  content: string,
): ReconciledEvent['EventId'] {
  const hash = createHash('sha256')
    .update(JSON.stringify([row.context, row.entity, row.primaryKey, timestamp, content]))
    .digest('hex');
  return `00000000-${hash.slice(0, 4)}-${hash.slice(4, 8)}-${hash.slice(8, 12)}-${hash.slice(12, 24)}`;
}
