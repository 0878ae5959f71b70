import { MetricUnit } from '@aws-lambda-powertools/metrics';
import * as z from 'zod/mini';
import { METRIC } from '../../metrics.js';
import { type ReconcileRequest, ReconcileRequestSchema } from '../request.js';
import type { PollDeps, PollReport } from './poll.js';

/**
 * The poll's requests are written down (conditionally, in its memory) before they are sent, so two
 * polls at once send once and a poll stopped in between is finished by the next: these keep them.
 */

/** Sends one request the poll decided on, counted and logged. */
export async function enqueue(
  deps: Pick<PollDeps, 'queue' | 'metrics' | 'logger'>,
  request: ReconcileRequest,
  report: Pick<PollReport, 'enqueued'>,
) {
  await deps.queue.enqueue(request);
  report.enqueued++;
  deps.metrics.addMetric(METRIC.ReconcilesRequested, MetricUnit.Count, 1);
  deps.logger.info('reconcile requested by the poll', {
    context: request.context,
    reason: request.reason,
    webhookId: request.webhookId,
    from: request.from,
  });
}

/** `memory` holding `pending` until they are sent. */
export function withPending<T extends { pending?: string | undefined }>(
  memory: T,
  pending: ReconcileRequest[],
): T {
  return pending.length === 0 ? memory : { ...memory, pending: JSON.stringify(pending) };
}

/** The requests an earlier poll wrote in `memory` and may not have sent (none if unreadable). */
export function pendingOf(memory: { pending?: string | undefined } | undefined): ReconcileRequest[] {
  if (memory?.pending === undefined) return [];
  let value: unknown;
  try {
    value = JSON.parse(memory.pending);
  } catch {
    return [];
  }
  const parsed = z.safeParse(z.array(ReconcileRequestSchema), value);
  return parsed.success ? parsed.data : [];
}
