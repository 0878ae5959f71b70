import { processPartialResponse, SqsFifoPartialProcessorAsync } from '@aws-lambda-powertools/batch';
import type { Logger } from '@aws-lambda-powertools/logger';
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { WorkerError } from './errors.js';

export type SqsBatchHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

export interface BatchHandlerDeps {
  logger: Logger;
  metrics: Metrics;
}

/**
 * An SQS FIFO batch handler with partial batch failures: records run one after another, a failed
 * record fails the rest of its message group in the batch (so nothing of that row overtakes it) while
 * other groups go on. Failures are logged with their message and event ids; metrics are flushed at
 * the end of every invocation.
 */
export function createFifoBatchHandler(
  handleRecord: (record: SQSRecord) => Promise<void>,
  { logger, metrics }: BatchHandlerDeps,
): SqsBatchHandler {
  const processor = new SqsFifoPartialProcessorAsync();
  const recordHandler = async (record: SQSRecord): Promise<void> => {
    try {
      await handleRecord(record);
    } catch (error) {
      metrics.addMetric('RecordsFailed', MetricUnit.Count, 1);
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
  return async (event, context) => {
    logger.addContext(context);
    try {
      return await processPartialResponse(event, recordHandler, processor, {
        context,
        skipGroupOnError: true,
        throwOnFullBatchFailure: false,
      });
    } finally {
      metrics.publishStoredMetrics();
    }
  };
}
