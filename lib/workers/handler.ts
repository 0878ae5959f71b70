import { processPartialResponse, SqsFifoPartialProcessorAsync } from '@aws-lambda-powertools/batch';
import type { Logger } from '@aws-lambda-powertools/logger';
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { METRIC } from '../metrics.js';
import { WorkerError } from './errors.js';

export type SqsBatchHandler = (event: SQSEvent, lambdaContext: Context) => Promise<SQSBatchResponse>;

export interface BatchHandlerDeps {
  logger: Logger;
  metrics: Metrics;
}

/** What a worker does with a batch: each record, then once what the records left to do together. */
export interface BatchSteps<T> {
  /** Handles one record; throws to fail it (and the rest of its group in the batch). */
  handleRecord(record: SQSRecord): Promise<T>;
  /**
   * Runs once after the records, with what each successful one returned (by message id), for the
   * work done per batch (one publish of all entries). Returns the records
   * that must fail after all, with why.
   */
  settle?(handled: ReadonlyMap<string, T>): Promise<ReadonlyMap<string, Error>>;
}

/**
 * An SQS FIFO batch handler with partial batch failures: one Powertools `processPartialResponse` with
 * `SqsFifoPartialProcessorAsync` and `skipGroupOnError` runs the records one after another, a failed
 * record failing the rest of its message group in the batch (so nothing of that row overtakes it)
 * while other groups go on. The records that `settle` fails then fail the rest of their groups too
 * ({@link failRestOfGroups}). Failures are logged with their message and event ids; metrics are
 * flushed at the end of every invocation.
 */
export function createFifoBatchHandler<T>(
  steps: BatchSteps<T>,
  { logger, metrics }: BatchHandlerDeps,
): SqsBatchHandler {
  const recordFailed = (record: SQSRecord, error: unknown) => {
    metrics.addMetric(METRIC.RecordsFailed, MetricUnit.Count, 1);
    logger.error('record failed', {
      messageId: record.messageId,
      messageGroupId: record.attributes?.MessageGroupId,
      receiveCount: record.attributes?.ApproximateReceiveCount,
      ...(error instanceof WorkerError && { eventId: error.eventId }),
      error: error as Error,
    });
  };

  return async (event, lambdaContext) => {
    logger.addContext(lambdaContext);
    try {
      const handled = new Map<string, T>();
      // A processor per invocation: it holds the records, and local invocations may overlap.
      const processed = await processPartialResponse(
        event,
        async (record: SQSRecord) => {
          try {
            handled.set(record.messageId, await steps.handleRecord(record));
          } catch (error) {
            recordFailed(record, error);
            throw error;
          }
        },
        new SqsFifoPartialProcessorAsync(),
        { context: lambdaContext, skipGroupOnError: true, throwOnFullBatchFailure: false },
      );
      const failedLater = (await steps.settle?.(handled)) ?? new Map<string, Error>();
      if (failedLater.size === 0) return processed;
      for (const record of event.Records) {
        const error = failedLater.get(record.messageId);
        if (error !== undefined) recordFailed(record, error);
      }
      const failed = new Set(processed.batchItemFailures.map((failure) => failure.itemIdentifier));
      for (const messageId of failedLater.keys()) failed.add(messageId);
      return { batchItemFailures: failRestOfGroups(event.Records, failed) };
    } finally {
      // Only when there are: an empty flush warns (Powertools' hasStoredMetrics is for this), and local
      // invocations that overlap share the buffer, so one may find it flushed by the other.
      if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
    }
  };
}

/**
 * The batch's failures in its order: the `failed` records and every record after one of them in its
 * message group (as `skipGroupOnError` does; a record without a group fails alone).
 */
function failRestOfGroups(
  records: readonly SQSRecord[],
  failed: ReadonlySet<string>,
): SQSBatchResponse['batchItemFailures'] {
  const failedGroups = new Set<string>();
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of records) {
    const group = record.attributes?.MessageGroupId;
    if (!failed.has(record.messageId) && (group === undefined || !failedGroups.has(group))) continue;
    if (group !== undefined) failedGroups.add(group);
    failures.push({ itemIdentifier: record.messageId });
  }
  return failures;
}
