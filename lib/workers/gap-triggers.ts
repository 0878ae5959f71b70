import type { Logger } from '@aws-lambda-powertools/logger';
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { EventPublisher } from '../bus/publisher.js';
import type { Outcome } from '../hooks.js';
import { METRIC } from '../metrics.js';
import type { Webhook } from '../model/types.js';
import type { ReconcileQueue } from '../reconcile/request.js';
import { gapTriggers } from '../reconcile/triggers/gap.js';
import { PublishError } from './publish.js';
import type { DeliveryMeta } from './record.js';

export interface GapTriggerDeps {
  /** The reconcile queue; absent without CRM_API_URL (gaps are recorded, not recovered). */
  reconcile?: ReconcileQueue | undefined;
  /** The bus, when the workers publish (PUBLISH_EVENTS). */
  publisher?: EventPublisher | undefined;
  logger: Logger;
  metrics: Metrics;
}

/**
 * Enqueues a reconcile of each gap the state event opened or closed and publishes
 * `receiver.gap.opened` / `receiver.gap.closed`. Only when the event was merged now, or on a
 * redelivery of an event already merged (a crash or a failure after the write: the triggers are read
 * from the stored webhook and the requests are deterministic, so the queue's deduplication absorbs a
 * repeat within 5 minutes). Throws when the queue or the bus refuses, so the record is redelivered.
 */
export async function fireGapTriggers(
  deps: GapTriggerDeps,
  webhook: Webhook,
  eventId: string,
  outcome: Outcome,
  meta: DeliveryMeta,
): Promise<void> {
  if (outcome === 'duplicate' && (meta.receiveCount ?? 1) <= 1) return;
  const triggers = gapTriggers(webhook, eventId);
  if (triggers.length === 0) return;
  if (deps.reconcile !== undefined) {
    for (const { request } of triggers) {
      await deps.reconcile.enqueue(request);
      deps.logger.info('reconcile requested for a gap', {
        context: request.context,
        webhookId: request.webhookId,
        reason: request.reason,
        from: request.from,
      });
    }
    deps.metrics.addMetric(METRIC.ReconcilesRequested, MetricUnit.Count, triggers.length);
  }
  if (deps.publisher === undefined) return;
  const results = await deps.publisher.publish(triggers.map(({ entry }) => entry));
  const failed = results.find((result) => !result.ok);
  if (failed !== undefined && !failed.ok)
    throw new PublishError(meta.messageId, failed.errorCode, failed.errorMessage);
}
