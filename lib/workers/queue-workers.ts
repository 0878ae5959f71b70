import type { SQSRecord } from 'aws-lambda';
import type { BusEntry } from '../bus/entry.js';
import { familyOfEvent, isRowEvent } from '../events/index.js';
import type { QueueKey } from '../queue/port.js';
import type { ReconcileQueue } from '../reconcile/request.js';
import { type AcceptedMarkerOptions, createAcceptedMarkers } from './accepted.js';
import { InvalidRecordError } from './errors.js';
import { fireGapTriggers } from './gap-triggers.js';
import { createFifoBatchHandler, type SqsBatchHandler } from './handler.js';
import { entryOf, type Publication, publishEntries } from './publish.js';
import { decodeRecord } from './record.js';
import { processRowEvent, type RowWorkerDeps } from './rows.js';
import { processStateEvent, type StateWorkerDeps } from './webhooks.js';

/** What a handled record leaves for the end of its batch. */
interface Settled {
  entry?: BusEntry;
  /** Of a row event's entry: its row and order key, remembered once published. */
  published?: string;
}

/** `publication` when events are published to the bus (PUBLISH_EVENTS), else nothing is. */
type WithPublication<D> = D & { publication?: Publication | undefined };

/** A row worker's dependencies: `markers` sets how often its last-accepted markers are written. */
type RowQueueWorkerDeps = WithPublication<RowWorkerDeps> & { markers?: AcceptedMarkerOptions };

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
 * per `ACCEPTED_MARKER_INTERVAL_MS`); then, once per batch, one publish of the batch's bus entries.
 * A marker or an entry that fails fails its record (and the rest of its group), which SQS redelivers.
 */
function createRowQueueWorker(deps: RowQueueWorkerDeps, queue: QueueKey): SqsBatchHandler {
  const markers = createAcceptedMarkers(deps.store, deps.logger, deps.markers);
  const published = createPublishedMemory();
  const { publication } = deps;
  const rowDeps: RowWorkerDeps = {
    ...deps,
    publishes: (echo) => publication !== undefined && (!echo || publication.publishEchoes),
  };
  return createFifoBatchHandler<Settled>(
    {
      async handleRecord(record) {
        const { event, meta } = decodeRecord(record);
        if (!isRowEvent(event) || familyOfEvent(event).queue !== queue) {
          throw foreign(record, `the ${queue} worker does not handle ${event.Event}`, event.EventId);
        }
        const result = await processRowEvent(rowDeps, event, meta);
        const { row, outcome, seq } = result;
        if (row === undefined || outcome === 'conflict' || outcome === 'resend' || outcome === 'unchanged') {
          return {};
        }
        // A snapshot came through no webhook: it never moves where a webhook's gap starts.
        if (result.changes === undefined) {
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
        const key = JSON.stringify([event.ContextIdentifier, event.Entity, event.PrimaryKey, seq]);
        // A duplicate this instance published already is not published again.
        if (outcome === 'duplicate' && published.has(key)) return {};
        // An erased row's change is not published unless it is the deletion itself (lib/workers/rows.ts).
        const entry = result.withheld
          ? undefined
          : publication && entryOf(publication, { ...result, meta }, { row });
        return { entry, published: key };
      },
      async settle(handled) {
        const unpublished = await publish(deps, handled);
        for (const [messageId, settled] of handled)
          if (settled.entry !== undefined && settled.published !== undefined && !unpublished.has(messageId))
            published.add(settled.published);
        return unpublished;
      },
    },
    deps,
  );
}

/**
 * The SQS handler of the webhook-state queue; its applied state events published once per batch. A
 * gap the event opened or closed is reconciled through `reconcile` (absent without CRM_API_URL) and
 * announced on the bus (`receiver.gap.*`) before the record counts as handled.
 */
export function createStateWorker(
  deps: WithPublication<StateWorkerDeps> & { reconcile?: ReconcileQueue | undefined },
): SqsBatchHandler {
  return createFifoBatchHandler<Settled>(
    {
      async handleRecord(record) {
        const { event, meta } = decodeRecord(record);
        if (isRowEvent(event)) {
          throw foreign(record, `the webhook-state worker does not handle ${event.Event}`, event.EventId);
        }
        const { webhook, outcome, seq } = await processStateEvent(deps, event, meta);
        await fireGapTriggers(
          { ...deps, publisher: deps.publication?.publisher },
          webhook,
          event.EventId,
          outcome,
          meta,
        );
        const handled = { meta, seq, outcome, echo: false };
        return { entry: deps.publication && entryOf(deps.publication, handled, { webhook }) };
      },
      settle: (handled) => publish(deps, handled),
    },
    deps,
  );
}

function publish(
  deps: WithPublication<RowWorkerDeps | StateWorkerDeps>,
  handled: ReadonlyMap<string, Settled>,
) {
  const entries = collect(handled, (settled) => settled.entry);
  if (deps.publication === undefined) return Promise.resolve(new Map<string, Error>());
  return publishEntries(deps.publication, entries, deps);
}

/** At most this many published changes remembered; beyond it the memory starts over (a copy too many, no loss). */
const MAX_REMEMBERED_PUBLISHED = 10_000;

/**
 * The changes this worker instance published, so that a redelivery it handles does not publish them
 * again. The history record keeps `unpublished` as it was written (no second write per event): a
 * redelivery to another instance, or after the memory started over, publishes once more (at least once).
 */
function createPublishedMemory() {
  const keys = new Set<string>();
  return {
    has: (key: string) => keys.has(key),
    add(key: string) {
      if (keys.size >= MAX_REMEMBERED_PUBLISHED) keys.clear();
      keys.add(key);
    },
  };
}

function collect<T>(handled: ReadonlyMap<string, Settled>, pick: (settled: Settled) => T | undefined) {
  const picked = new Map<string, T>();
  for (const [messageId, settled] of handled) {
    const value = pick(settled);
    if (value !== undefined) picked.set(messageId, value);
  }
  return picked;
}

function foreign(record: SQSRecord, message: string, eventId: string): InvalidRecordError {
  return new InvalidRecordError(message, record.messageId, { eventId });
}
