import { Logger } from '@aws-lambda-powertools/logger';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import * as z from 'zod/mini';
import { ReconcileRequestSchema } from '../lib/reconcile/request.js';

const logger = new Logger();

/**
 * SQS (reconcile FIFO queue, batch size 1) → a reconcile run. A placeholder until the engine
 * (lib/reconcile/run.ts) lands: it reads the request and fails it, so nothing is lost: after the
 * queue's maxReceiveCount the request waits in the reconcile DLQ (alarm, redrive).
 */
export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => ({
  batchItemFailures: event.Records.map((record) => {
    const parsed = z.safeParse(ReconcileRequestSchema, parseJson(record.body));
    if (!parsed.success)
      logger.error('reconcile request refused: not a ReconcileRequest (lib/reconcile/request.ts)', {
        messageId: record.messageId,
      });
    else
      logger.error('reconcile request not run: this version has no reconcile engine', {
        messageId: record.messageId,
        context: parsed.data.context,
        reason: parsed.data.reason,
      });
    return { itemIdentifier: record.messageId };
  }),
});

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
