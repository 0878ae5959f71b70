import type { Logger } from '@aws-lambda-powertools/logger';
import type { ReconcileOutcome, RecoveryStore } from '../../store/recovery.js';
import type { ReconcileRequest } from '../request.js';

/** Where the reconcile function records a run's state for the webhook it names (the gap's card shows it). */
export type ReconcileRecorder = Pick<RecoveryStore, 'recordReconcile'> &
  Partial<Pick<RecoveryStore, 'lastReconcile'>>;

/** Where the poll records that it set a webhook Active again. */
export type ReactivationRecorder = Pick<RecoveryStore, 'recordReactivation'>;

/** What a run's state adds to the request's trigger and window: the status, when, its counts or error (and its `to`, once fixed). */
export type RunState = Omit<
  ReconcileOutcome,
  'reason' | 'requestedAt' | 'from' | 'full' | 'entities' | 'maxDeletes'
>;

/**
 * Records `state` of the run of `request` on its webhook's recovery item, when the request names a
 * `webhookId` (a gap's, the poll's, a person's from a gap's card; a full pass names none). Bookkeeping
 * only: a store that refuses or fails is logged, never thrown (the run's work is done or retried
 * regardless).
 */
export async function recordRun(
  recorder: ReconcileRecorder | undefined,
  request: ReconcileRequest,
  state: RunState,
  logger: Logger,
): Promise<void> {
  if (recorder === undefined || request.webhookId === undefined) return;
  const { context, webhookId, reason, requestedAt, from, to, full, entities, maxDeletes } = request;
  try {
    const written = await recorder.recordReconcile(context, webhookId, {
      reason,
      requestedAt,
      ...(from !== undefined && { from }),
      ...(to !== undefined && { to }),
      ...(full === true && { full }),
      ...(entities !== undefined && { entities }),
      ...(maxDeletes !== undefined && { maxDeletes }),
      ...state,
    });
    if (!written)
      logger.info('a newer reconcile of this webhook is recorded: this one is not', { context, webhookId });
  } catch (error) {
    logger.warn('the reconcile of a webhook could not be recorded', {
      context,
      webhookId,
      status: state.status,
      error: (error as Error).message,
    });
  }
}

/** Records that the poll set the webhook Active at `at` (ISO); as {@link recordRun}, logged, never thrown. */
export async function recordReactivation(
  recorder: ReactivationRecorder | undefined,
  detail: { context: string; webhookId: number },
  at: string,
  logger: Logger,
): Promise<void> {
  if (recorder === undefined) return;
  const { context, webhookId } = detail;
  try {
    if (!(await recorder.recordReactivation(context, webhookId, at)))
      logger.info('a later reactivation of this webhook is recorded: this one is not', {
        context,
        webhookId,
      });
  } catch (error) {
    logger.warn('the reactivation of a webhook could not be recorded', {
      context,
      webhookId,
      error: (error as Error).message,
    });
  }
}
