import type { SQSRecord } from 'aws-lambda';
import type { BusEntry } from '../bus/entry.js';
import { familyOfEvent, isRowEvent } from '../events/index.js';
import type { QueueKey } from '../queue/port.js';
import type { ReconcileQueue } from '../reconcile/request.js';
import { type AcceptedMarkerOptions, createAcceptedMarkers } from './accepted.js';
import { createPublishedMemory, type PublishedKey } from './bus-decision.js';
import { InvalidRecordError } from './errors.js';
import { fireGapTriggers } from './gap-triggers.js';
import { createFifoBatchHandler, type SqsBatchHandler } from './handler.js';
import { entryOf, publishEntries } from './publish.js';
import { decodeRecord } from './record.js';
import { isMerged, processRowEvent, type RowWorkerDeps } from './rows.js';
import { processStateEvent, type StateWorkerDeps } from './webhooks.js';

/** What a handled record leaves for the end of its batch: its change's bus entry, and which change it is. */
interface Settled {
  entry?: BusEntry;
  /** Of a row event's entry: its row and order key, remembered once published. */
  change?: PublishedKey;
}

/** A row worker's dependencies: `markers` sets how often its last-accepted markers are written. */
type RowQueueWorkerDeps = RowWorkerDeps & { markers?: AcceptedMarkerOptions };

/** The SQS handler of the contact or activity queue (see {@link createRowQueueWorker}). */
export function createRowWorker(
  deps: RowQueueWorkerDeps & { entity: 'contact' | 'activity' },
): SqsBatchHandler {
  return createRowQueueWorker(deps, deps.entity);
}

/** The SQS handler of the entities queue: every row event the registry routes there (person, sale, list.*, y_*, ...). */
export function createEntitiesWorker(deps: RowQueueWorkerDeps): SqsBatchHandler {
  return createRowQueueWorker(deps, 'entities');
}

/**
 * A row worker for the row events the registry routes to `queue`: each record through
 * {@link processRowEvent}, then its last-accepted marker (at most one write per context and WebhookName
 * per `ACCEPTED_MARKER_INTERVAL_MS`) and the bus entry of a change its result says to publish; then,
 * once per batch, one publish of the batch's entries. A marker or an entry that fails fails its record
 * (and the rest of its group), which SQS redelivers.
 */
function createRowQueueWorker(deps: RowQueueWorkerDeps, queue: QueueKey): SqsBatchHandler {
  const markers = createAcceptedMarkers(deps.store, deps.logger, deps.markers);
  const published = createPublishedMemory();
  const rowDeps: RowWorkerDeps = { ...deps, published };
  return createFifoBatchHandler<Settled>(
    {
      async handleRecord(record) {
        const { event, meta } = decodeRecord(record);
        if (!isRowEvent(event) || familyOfEvent(event).queue !== queue) {
          throw foreign(record, `the ${queue} worker does not handle ${event.Event}`, event.EventId);
        }
        const result = await processRowEvent(rowDeps, event, meta);
        const { row, seq } = result;
        // A snapshot came through no webhook: it never moves where a webhook's gap starts.
        if (isMerged(result.outcome) && result.changes === undefined) {
          await markers.raise({
            context: event.ContextIdentifier,
            webhookName: event.WebhookName,
            accepted: {
              seq,
              timestamp: event.Timestamp,
              eventId: event.EventId,
              ...(meta.receivedAt !== undefined && { receivedAt: meta.receivedAt }),
            },
          });
        }
        // A change to publish has its row, and there is a publication: the result says `off` without one.
        if (result.bus !== 'publish' || row === undefined || deps.publication === undefined) return {};
        return {
          entry: entryOf(deps.publication, { ...result, meta }, { row }),
          change: [event.ContextIdentifier, event.Entity, event.PrimaryKey, seq],
        };
      },
      async settle(handled) {
        const failed = await publish(deps, handled);
        for (const [messageId, { change }] of handled)
          if (change !== undefined && !failed.has(messageId)) published.add(change);
        return failed;
      },
    },
    deps,
  );
}

/**
 * The SQS handler of the webhook-state queue; its state events' changes that their results say to
 * publish are published once per batch. A gap the event opened or closed is reconciled through
 * `reconcile` (absent without CRM_API_URL) and announced on the bus (`receiver.gap.*`) before the
 * record counts as handled.
 */
export function createStateWorker(
  deps: StateWorkerDeps & { reconcile?: ReconcileQueue | undefined },
): SqsBatchHandler {
  return createFifoBatchHandler<Settled>(
    {
      async handleRecord(record) {
        const { event, meta } = decodeRecord(record);
        if (isRowEvent(event)) {
          throw foreign(record, `the webhook-state worker does not handle ${event.Event}`, event.EventId);
        }
        const { webhook, outcome, seq, bus } = await processStateEvent(deps, event, meta);
        await fireGapTriggers(
          { ...deps, publisher: deps.publication?.publisher },
          webhook,
          event.EventId,
          outcome,
          meta,
        );
        if (bus !== 'publish' || deps.publication === undefined) return {};
        return { entry: entryOf(deps.publication, { meta, seq, echo: false }, { webhook }) };
      },
      settle: (handled) => publish(deps, handled),
    },
    deps,
  );
}

function publish(
  deps: RowWorkerDeps | StateWorkerDeps,
  handled: ReadonlyMap<string, Settled>,
): Promise<Map<string, Error>> {
  const entries = new Map<string, BusEntry>();
  for (const [messageId, { entry }] of handled) if (entry !== undefined) entries.set(messageId, entry);
  if (deps.publication === undefined) return Promise.resolve(new Map());
  return publishEntries(deps.publication, entries, deps);
}

function foreign(record: SQSRecord, message: string, eventId: string): InvalidRecordError {
  return new InvalidRecordError(message, record.messageId, { eventId });
}
