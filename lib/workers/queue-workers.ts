import type { SQSRecord } from 'aws-lambda';
import type { BusEntry } from '../bus/entry.js';
import { familyOfEvent, isRowEvent } from '../events/index.js';
import type { RowEntity } from '../model/types.js';
import type { QueueKey } from '../queue/port.js';
import type { ReconcileQueue } from '../reconcile/request.js';
import { type AcceptedNote, createAcceptedMarkers } from './accepted.js';
import { InvalidRecordError } from './errors.js';
import { fireGapTriggers } from './gap-triggers.js';
import { createFifoBatchHandler, type SqsBatchHandler } from './handler.js';
import { entryOf, type Publication, publishEntries } from './publish.js';
import { decodeRecord } from './record.js';
import { processRowEvent, type RowWorkerDeps } from './rows.js';
import { processStateEvent, type StateWorkerDeps } from './webhooks.js';

/** What a handled record leaves for the end of its batch. */
interface Settled {
  accepted?: AcceptedNote;
  entry?: BusEntry;
  /** The history record whose `unpublished` flag its published entry clears. */
  history?: { context: string; entity: RowEntity; primaryKey: number; seq: string };
}

/** `publication` when events are published to the bus (PUBLISH_EVENTS), else nothing is. */
type WithPublication<D> = D & { publication?: Publication | undefined };

/** The SQS handler of the contact or activity queue (see {@link createRowQueueWorker}). */
export function createRowWorker(
  deps: WithPublication<RowWorkerDeps> & { entity: 'contact' | 'activity' },
): SqsBatchHandler {
  return createRowQueueWorker(deps, deps.entity);
}

/** The SQS handler of the entities queue: every row event the registry routes there (person, sale, list.*, y_*, ...). */
export function createEntitiesWorker(deps: WithPublication<RowWorkerDeps>): SqsBatchHandler {
  return createRowQueueWorker(deps, 'entities');
}

/**
 * A row worker for the row events the registry routes to `queue`: each record through
 * {@link processRowEvent}; then, once per batch, the last-accepted markers (one write per context and
 * WebhookName, skipped when it would not move forward) and one publish of the batch's bus entries. A
 * marker or an entry that fails fails its records (and the rest of their groups), which SQS redelivers.
 */
function createRowQueueWorker(deps: WithPublication<RowWorkerDeps>, queue: QueueKey): SqsBatchHandler {
  const markers = createAcceptedMarkers(deps.store, deps.logger);
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
        const live = result.changes === undefined;
        return {
          ...(live && {
            accepted: {
              context: event.ContextIdentifier,
              webhookName: event.WebhookName,
              accepted: { seq, timestamp: event.Timestamp, eventId: event.EventId },
            },
          }),
          entry: publication && entryOf(publication, { ...result, meta }, { row }),
          history: {
            context: event.ContextIdentifier,
            entity: event.Entity,
            primaryKey: event.PrimaryKey,
            seq,
          },
        };
      },
      async settle(handled) {
        const [unmarked, unpublished] = await Promise.all([
          markers.write(collect(handled, (settled) => settled.accepted)),
          publish(deps, handled),
        ]);
        await clearPublished(deps, handled, unpublished);
        return new Map([...unmarked, ...unpublished]);
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

/**
 * Clears the `unpublished` flag of every history record whose entry was published now. A clear that
 * fails is only logged: the flag left behind makes a later redelivery publish the change again (at
 * least once, never lost).
 */
async function clearPublished(
  deps: RowWorkerDeps,
  handled: ReadonlyMap<string, Settled>,
  failed: ReadonlyMap<string, Error>,
): Promise<void> {
  const published = [...handled].filter(([messageId, s]) => s.entry !== undefined && !failed.has(messageId));
  const cleared = await Promise.allSettled(
    published.map(([, { history }]) =>
      history === undefined
        ? Promise.resolve()
        : deps.store.markPublished(history.context, history.entity, history.primaryKey, history.seq),
    ),
  );
  const failures = cleared.filter((result) => result.status === 'rejected').length;
  if (failures > 0)
    deps.logger.warn('published, but not noted in the history; a redelivery publishes again', {
      count: failures,
    });
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
