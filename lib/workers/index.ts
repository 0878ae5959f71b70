/** The workers: the SQS handlers of the four queues and the steps they are made of. */
export { type AcceptedMarkers, type AcceptedNote, createAcceptedMarkers } from './accepted.js';
export { type AlertPublisher, createSnsAlertPublisher } from './alerts.js';
export * from './errors.js';
export { type BatchSteps, createFifoBatchHandler, type SqsBatchHandler } from './handler.js';
export { entryOf, type Publication, PublishError, publishEntries } from './publish.js';
export { createEntitiesWorker, createRowWorker, createStateWorker } from './queue-workers.js';
export { type DeliveryMeta, decodeRecord } from './record.js';
export { processRowEvent, type RowStore, type RowWorkerDeps } from './rows.js';
export { processStateEvent, type StateWorkerDeps, type WebhookStore } from './webhooks.js';
