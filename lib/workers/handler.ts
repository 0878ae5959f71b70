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

/** What one invocation needs: a record handler, and what to do once every record was tried. */
export interface BatchRun {
  handleRecord: (record: SQSRecord) => Promise<void>;
  /** Runs after the records; returns message ids that must be retried although they succeeded. */
  afterRecords?: () => Promise<ReadonlySet<string>>;
}

/**
 * An SQS FIFO batch handler with partial batch failures: records run one after another, a failed
 * record fails the rest of its message group in the batch (so nothing of that row overtakes it) while
 * other groups go on. Failures are logged with their message and event ids; metrics are flushed at
 * the end of every invocation.
 *
 * `handleRecord` is one function for every batch; a worker that keeps state per batch passes a
 * factory instead, called once per invocation.
 */
export function createFifoBatchHandler(
  handleRecord: ((record: SQSRecord) => Promise<void>) | { perBatch: () => BatchRun },
  { logger, metrics }: BatchHandlerDeps,
): SqsBatchHandler {
  const newRun: () => BatchRun =
    typeof handleRecord === 'function' ? () => ({ handleRecord }) : handleRecord.perBatch;
  return async (event, context) => {
    logger.addContext(context);
    const run = newRun();
    const recordHandler = async (record: SQSRecord): Promise<void> => {
      try {
        await run.handleRecord(record);
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
    try {
      // A processor per invocation: it holds the batch's records, and invocations may overlap.
      const response = await processPartialResponse(
        event,
        recordHandler,
        new SqsFifoPartialProcessorAsync(),
        {
          context,
          skipGroupOnError: true,
          throwOnFullBatchFailure: false,
        },
      );
      const retry = (await run.afterRecords?.()) ?? new Set<string>();
      return retry.size === 0 ? response : withRetries(event, response, retry);
    } finally {
      metrics.publishStoredMetrics();
    }
  };
}

/** `response` plus the records in `retry`, and, as for any failure, every later record of their groups. */
function withRetries(
  event: SQSEvent,
  response: SQSBatchResponse,
  retry: ReadonlySet<string>,
): SQSBatchResponse {
  const failed = new Set([...response.batchItemFailures.map((failure) => failure.itemIdentifier), ...retry]);
  const failedGroups = new Set<string | undefined>();
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    const group = record.attributes?.MessageGroupId;
    if (failed.has(record.messageId) || failedGroups.has(group)) {
      failedGroups.add(group);
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures };
}
