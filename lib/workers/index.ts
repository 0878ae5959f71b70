import type { SQSRecord } from 'aws-lambda';
import { familyOfEvent, isRowEvent, type RowEntity } from '../events/index.js';
import type { QueueKey } from '../queue/port.js';
import { createAcceptedBatch } from './accepted.js';
import { InvalidRecordError } from './errors.js';
import { createFifoBatchHandler, type SqsBatchHandler } from './handler.js';
import { decodeRecord } from './record.js';
import { processRowEvent, type RowWorkerDeps } from './rows.js';
import { processStateEvent, type StateWorkerDeps } from './webhooks.js';

export { type AcceptedBatch, createAcceptedBatch } from './accepted.js';
export { type AlertPublisher, createSnsAlertPublisher } from './alerts.js';
export * from './errors.js';
export { type BatchRun, createFifoBatchHandler, type SqsBatchHandler } from './handler.js';
export { type DeliveryMeta, decodeRecord } from './record.js';
export { processRowEvent, type RowEventOptions, type RowStore, type RowWorkerDeps } from './rows.js';
export { processStateEvent, type StateWorkerDeps, type WebhookStore } from './webhooks.js';

/**
 * The SQS handler of the contact or activity queue. The last-accepted markers of a batch are written
 * once per (context, WebhookName) after its records, not once per event.
 */
export function createRowWorker(deps: RowWorkerDeps & { entity: RowEntity }): SqsBatchHandler {
  return createRowQueueWorker(deps, deps.entity);
}

/** The SQS handler of the entities queue: every row event the registry routes there (person, sale, list.*, y_*, ...). */
export function createEntitiesWorker(deps: RowWorkerDeps): SqsBatchHandler {
  return createRowQueueWorker(deps, 'entities');
}

/** A row worker that handles the row events its registry families route to `queue`. */
function createRowQueueWorker(deps: RowWorkerDeps, queue: QueueKey): SqsBatchHandler {
  const perBatch = () => {
    const accepted = createAcceptedBatch();
    return {
      handleRecord: async (record: SQSRecord) => {
        const { event, meta } = await decodeRecord(record);
        if (!isRowEvent(event) || familyOfEvent(event).queue !== queue) {
          throw new InvalidRecordError(
            `the ${queue} worker does not handle ${event.Event}`,
            record.messageId,
            {
              eventId: event.EventId,
            },
          );
        }
        await processRowEvent(deps, event, meta, { accepted });
      },
      afterRecords: () => accepted.flush(deps.store, deps.logger),
    };
  };
  return createFifoBatchHandler({ perBatch }, deps);
}

/** The SQS handler of the webhook-state queue. */
export function createStateWorker(deps: StateWorkerDeps): SqsBatchHandler {
  return createFifoBatchHandler(async (record) => {
    const { event, meta } = await decodeRecord(record);
    if (isRowEvent(event)) {
      throw new InvalidRecordError(
        `the webhook-state worker does not handle ${event.Event}`,
        record.messageId,
        {
          eventId: event.EventId,
        },
      );
    }
    await processStateEvent(deps, event, meta);
  }, deps);
}
