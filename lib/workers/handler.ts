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
 * An SQS FIFO batch handler with partial batch failures (Powertools `SqsFifoPartialProcessorAsync`,
 * `skipGroupOnError`): records run one after another, a failed record fails the rest of its message
 * group in the batch (so nothing of that row overtakes it) while other groups go on. The records that
 * `settle` fails go through the processor a second time, failing there, so Powertools fails the rest
 * of their groups too. Failures are logged with their message and event ids; metrics are flushed at
 * the end of every invocation.
 */
export function createFifoBatchHandler<T>(
  steps: BatchSteps<T>,
  { logger, metrics }: BatchHandlerDeps,
): SqsBatchHandler {
  const logged =
    (handle: (record: SQSRecord) => Promise<void>) =>
    async (record: SQSRecord): Promise<void> => {
      try {
        await handle(record);
      } catch (error) {
        metrics.addMetric(METRIC.RecordsFailed, MetricUnit.Count, 1);
        logger.error('record failed', {
          messageId: record.messageId,
          messageGroupId: record.attributes?.MessageGroupId,
          receiveCount: record.attributes?.ApproximateReceiveCount,
          ...(error instanceof WorkerError && { eventId: error.eventId }),
          error: error as Error,
        });
        throw error;
      }
    };

  return async (event, lambdaContext) => {
    logger.addContext(lambdaContext);
    try {
      const handled = new Map<string, T>();
      const first = await processFifo(
        event.Records,
        logged(async (record) => {
          handled.set(record.messageId, await steps.handleRecord(record));
        }),
        lambdaContext,
      );
      const failed = (await steps.settle?.(handled)) ?? new Map<string, Error>();
      if (failed.size === 0) return first;
      const second = await processFifo(
        event.Records.filter((record) => handled.has(record.messageId)),
        logged(async (record) => {
          const error = failed.get(record.messageId);
          if (error !== undefined) throw error;
        }),
        lambdaContext,
      );
      const ids = new Set(
        [...first.batchItemFailures, ...second.batchItemFailures].map((f) => f.itemIdentifier),
      );
      return {
        batchItemFailures: event.Records.filter((record) => ids.has(record.messageId)).map((record) => ({
          itemIdentifier: record.messageId,
        })),
      };
    } finally {
      // Only when there are: an empty flush warns (Powertools' hasStoredMetrics is for this), and local
      // invocations that overlap share the buffer, so one may find it flushed by the other.
      if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
    }
  };
}

/** One pass of Powertools' FIFO processor (a processor per pass: it holds the records, and invocations may overlap). */
function processFifo(
  records: SQSRecord[],
  recordHandler: (record: SQSRecord) => Promise<void>,
  lambdaContext: Context,
): Promise<SQSBatchResponse> {
  return processPartialResponse({ Records: records }, recordHandler, new SqsFifoPartialProcessorAsync(), {
    context: lambdaContext,
    skipGroupOnError: true,
    throwOnFullBatchFailure: false,
  });
}
