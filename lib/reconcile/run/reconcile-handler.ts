import { processPartialResponse, SqsFifoPartialProcessorAsync } from '@aws-lambda-powertools/batch';
import type { Logger } from '@aws-lambda-powertools/logger';
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import * as z from 'zod/mini';
import type { EventPublisher } from '../../bus/publisher.js';
import { DEFAULT_RUN_BOUNDS, type RunBounds } from '../../config/reconcile-bounds.js';
import { METRIC } from '../../metrics.js';
import { lifecycleEntry } from '../records/lifecycle.js';
import { type ReconcileRecorder, recordRun } from '../records/recovery.js';
import { type ReconcileRequest, ReconcileRequestSchema } from '../request.js';
import { pastBounds, supersedes } from './bounds.js';
import { type Cursor, parseCursor } from './cursor.js';
import { type ReconcileDeps, runReconcile } from './run.js';

/** SQS hides a message for at most 12 hours. */
const MAX_VISIBILITY_SECONDS = 43_200;

export interface ReconcileHandlerDeps {
  /** The run's dependencies for this invocation (the CRM client's budget reads `lambdaContext`). */
  runDeps(lambdaContext: Context): Promise<ReconcileDeps>;
  /** Sends a request to the reconcile queue (a continuation: same group, its own dedup id). */
  carryOn(request: ReconcileRequest): Promise<void>;
  /** Hides the received message for `seconds` (ChangeMessageVisibility): it comes back then. */
  hide(receiptHandle: string, seconds: number): Promise<void>;
  /** The bus, for `receiver.reconcile.*`; absent when publishing is off (then only logged). */
  publisher: EventPublisher | undefined;
  /** The reconcile queue's maxReceiveCount: the attempt that gives up publishes `receiver.reconcile.failed`. */
  maxReceives: number;
  /** Where a run that names a `webhookId` records its state for the gap's card; absent: not recorded. */
  recovery?: ReconcileRecorder | undefined;
  /** A run's age and invocations at most (RECONCILE_MAX_RUN_HOURS, RECONCILE_MAX_INVOCATIONS). */
  bounds?: RunBounds;
  logger: Logger;
  metrics: Metrics;
  now?: () => Date;
}

/**
 * The reconcile queue's SQS handler (batch size 1; a larger batch is run record by record by one
 * Powertools `processPartialResponse` with the FIFO processor, a request that fails or waits failing
 * the rest of its group in the batch): parses the request, waits out its cursor's `notBefore` by hiding
 * the message until then, runs it ({@link runReconcile}) and carries it on in a new message when the
 * run says so (the cursor travels in it), so no invocation runs past its timeout. At the end: `receiver.reconcile.completed` on the bus
 * and `ReconcileCompleted`. A failure leaves the message to SQS's retries; the attempt numbered
 * `maxReceives` also publishes `receiver.reconcile.failed` and `ReconcileFailed` (the message then
 * moves to the reconcile DLQ: visible, redrivable). A run past its bounds ({@link pastBounds}) fails the
 * same way at once, its message deleted; a run a newer one of the same window covers ({@link supersedes})
 * stops quietly.
 */
export function createReconcileHandler(deps: ReconcileHandlerDeps) {
  const now = deps.now ?? (() => new Date());
  const { logger, metrics } = deps;
  const bounds = deps.bounds ?? DEFAULT_RUN_BOUNDS;

  /** `receiver.reconcile.failed`, `ReconcileFailed` (its alarm) and the failed state on the gap's card. */
  const fail = async (request: ReconcileRequest | undefined, startedAt: string | undefined, line: string) => {
    metrics.addMetric(METRIC.ReconcileFailed, MetricUnit.Count, 1);
    await publish(
      deps,
      lifecycleEntry('receiver.reconcile.failed', {
        context: request?.context ?? 'unknown',
        reason: request?.reason ?? 'unknown',
        from: request?.from,
        to: request?.to,
        error: line,
      }),
    );
    if (request === undefined) return;
    const at = now().toISOString();
    await recordRun(
      deps.recovery,
      request,
      { status: 'failed', startedAt: startedAt ?? at, at, error: line },
      logger,
    );
  };

  /** A continuation's fate before it runs: given up (past its bounds), superseded, or go on. */
  const checkContinuation = async (request: ReconcileRequest, cursor: Cursor) => {
    const past = pastBounds(cursor, now(), bounds);
    if (past !== undefined) return { past };
    if (request.webhookId === undefined || deps.recovery?.lastReconcile === undefined) return {};
    try {
      const last = await deps.recovery.lastReconcile(request.context, request.webhookId);
      return { superseded: supersedes(last, request, cursor) };
    } catch (error) {
      // Bookkeeping: a store that cannot say lets the run go on (at worst beside a newer one).
      logger.warn('the last reconcile of a webhook could not be read', {
        context: request.context,
        webhookId: request.webhookId,
        error: (error as Error).message,
      });
      return {};
    }
  };

  /** Runs one request; throws to leave its message on the queue (SQS's retry, or back after its wait). */
  const one = async (record: SQSRecord, lambdaContext: Context): Promise<void> => {
    let request: ReconcileRequest | undefined;
    let startedAt: string | undefined;
    try {
      request = parseRequest(record.body);
      const cursor = parseCursor(request.cursor);
      if (cursor !== undefined) {
        const fate = await checkContinuation(request, cursor);
        if (fate.past !== undefined) {
          logger.error('reconcile failed', { context: request.context, error: fate.past });
          await fail(request, cursor.startedAt, fate.past);
          return;
        }
        if (fate.superseded) {
          logger.info('reconcile superseded: a newer run covers its window', {
            context: request.context,
            webhookId: request.webhookId,
          });
          return;
        }
      }
      const notBefore = cursor?.notBefore;
      const waitMs = notBefore === undefined ? 0 : Date.parse(notBefore) - now().getTime();
      if (waitMs > 0) {
        const seconds = Math.min(MAX_VISIBILITY_SECONDS, Math.ceil(waitMs / 1000));
        await deps.hide(record.receiptHandle, seconds);
        logger.info('reconcile waits for the CRM', { context: request.context, seconds });
        throw new WaitingError(seconds);
      }
      // The run's start orders its records: a run started later is newer (lib/reconcile/records/recovery.ts).
      startedAt = cursor?.startedAt ?? now().toISOString();
      if (cursor === undefined)
        await recordRun(deps.recovery, request, { status: 'running', startedAt, at: startedAt }, logger);
      const result = await runReconcile(request, await deps.runDeps(lambdaContext));
      if (result.status === 'carry-on') {
        await deps.carryOn(result.request);
        logger.info('reconcile carries on in a new message', {
          context: request.context,
          why: result.why,
          delayMs: result.delayMs,
        });
        return;
      }
      logger.info('reconcile completed', { ...result.detail, counters: result.counters });
      metrics.addMetric(METRIC.ReconcileCompleted, MetricUnit.Count, 1);
      // The run's work is queued: a bus that refuses its announcement is logged and counted, never a
      // reason to run it again (nor to end it in the DLQ as failed).
      await publish(deps, lifecycleEntry('receiver.reconcile.completed', result.detail));
      const { to, rowsListed, rowsChanged, rowsDeleted, apiCalls, durationMs, notReconciled } = result.detail;
      const counts = { to, rowsListed, rowsChanged, rowsDeleted, apiCalls, durationMs, notReconciled };
      const clockSkewSeconds = skewSaid(deps, request.context, result.clockSkewMs);
      const { deletesHeld } = result;
      for (const entity of Object.keys(deletesHeld ?? {})) {
        metrics.addMetric(METRIC.ReconcileDeletesHeld, MetricUnit.Count, 1);
        logger.warn(`reconcile held the deletes of ${entity}: ${notReconciled[entity]}`, {
          context: request.context,
          entity,
        });
      }
      await recordRun(
        deps.recovery,
        request,
        { status: 'completed', startedAt, at: now().toISOString(), ...counts, deletesHeld, clockSkewSeconds },
        logger,
      );
    } catch (error) {
      if (error instanceof WaitingError) throw error;
      const attempt = Number(record.attributes.ApproximateReceiveCount) || 1;
      const line = oneLine(error);
      logger.error('reconcile failed', { context: request?.context, attempt, error: line });
      if (attempt >= deps.maxReceives) await fail(request, startedAt, line);
      throw error;
    }
  };

  return async (event: SQSEvent, lambdaContext: Context): Promise<SQSBatchResponse> => {
    try {
      // A processor per invocation: it holds the records, and local invocations may overlap.
      return await processPartialResponse(
        event,
        (record: SQSRecord) => one(record, lambdaContext),
        new SqsFifoPartialProcessorAsync(),
        { context: lambdaContext, skipGroupOnError: true, throwOnFullBatchFailure: false },
      );
    } finally {
      if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
    }
  };
}

/** A request that waits for its cursor's `notBefore`: its message is hidden until then, not failed. */
class WaitingError extends Error {
  constructor(seconds: number) {
    super(`the reconcile waits ${seconds} s for the CRM`);
    this.name = 'WaitingError';
  }
}

/** The message's request, or a one-line error naming the first wrong field. */
function parseRequest(body: string): ReconcileRequest {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new Error(
      'the reconcile message is not JSON: it must be a ReconcileRequest (lib/reconcile/request.ts)',
    );
  }
  const parsed = z.safeParse(ReconcileRequestSchema, value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `the reconcile message's ${issue?.path.join('.') || 'body'} is not accepted: ${issue?.message}`,
    );
  }
  return parsed.data;
}

/**
 * A skew of the CRM API's clock the run met (lib/reconcile/run/clock.ts), said: one warning line and
 * `CrmClockSkew`; its seconds for the gap's card. Snapshots are not ordered by that clock, so it
 * changes nothing applied; it tells the tenant's administrator (and whoever reads the API's dates).
 */
function skewSaid(
  deps: ReconcileHandlerDeps,
  context: string,
  skewMs: number | undefined,
): number | undefined {
  if (skewMs === undefined) return undefined;
  const seconds = Math.round(skewMs / 1000);
  deps.metrics.addMetric(METRIC.CrmClockSkew, MetricUnit.Count, 1);
  deps.logger.warn(
    `the CRM's API clock (its Date header) is ${Math.abs(seconds)} s ${seconds > 0 ? 'ahead of' : 'behind'} the clock of its events' Timestamps: snapshots are ordered by the rows' own updated/registered, not by it`,
    { context, clockSkewSeconds: seconds },
  );
  return seconds;
}

/** Puts a lifecycle event on the bus; a refusal or an error is logged and counted (`PublishFailures`), never thrown. */
async function publish(deps: ReconcileHandlerDeps, entry: ReturnType<typeof lifecycleEntry>): Promise<void> {
  if (deps.publisher === undefined) return;
  const [result] = await deps.publisher
    .publish([entry])
    .catch((error: Error) => [{ ok: false as const, errorCode: error.name, errorMessage: error.message }]);
  if (result === undefined || result.ok) return;
  deps.metrics.addMetric(METRIC.PublishFailures, MetricUnit.Count, 1);
  deps.logger.error(`${entry.DetailType} not published`, { errorCode: result.errorCode });
}

/** An error as one line, no stack (the CRM client's messages name the call, never a credential). */
function oneLine(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.replace(/\s+/g, ' ').slice(0, 500);
}
