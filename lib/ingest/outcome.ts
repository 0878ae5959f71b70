import type { Logger } from '@aws-lambda-powertools/logger';
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { METRIC } from '../metrics.js';
import type { DeliveryResponse } from './handle.js';

export interface OutcomeDeps {
  logger: Logger;
  metrics: Metrics;
}

/**
 * What the ingest logs and counts for an answer: one log line (accepted ones at DEBUG only: they are
 * the bulk) and the metric of its outcome, with the delivery's EventId, Event and ContextIdentifier as
 * keys of the invocation's log lines.
 */
export function recordOutcome(response: DeliveryResponse, { logger, metrics }: OutcomeDeps): void {
  const { decision } = response;
  logger.appendKeys({
    EventId: decision.log.eventId,
    Event: decision.log.event,
    ContextIdentifier: decision.log.contextIdentifier,
    signatureVerified: decision.log.signatureVerified,
  });
  if (response.enqueueMs !== undefined) {
    metrics.addMetric(
      METRIC.EnqueueLatency,
      MetricUnit.Milliseconds,
      Math.round(response.enqueueMs * 10) / 10,
    );
  }
  if (response.status === 503) {
    logger.error('queue unavailable; answered 503', {
      queue: decision.kind === 'accept' || decision.kind === 'park' ? decision.message.queue : undefined,
      error: response.error,
    });
    metrics.addMetric(METRIC.EnqueueFailures, MetricUnit.Count, 1);
  } else if (response.status === 413) {
    logger.warn('refused: the message does not fit the queue', {
      queue: decision.kind === 'accept' || decision.kind === 'park' ? decision.message.queue : undefined,
    });
    metrics.addMetric(METRIC.Refused, MetricUnit.Count, 1);
  } else if (decision.kind === 'accept') {
    // Accepted deliveries are the bulk: counted by the Accepted metric, logged at DEBUG only (cost).
    logger.debug('accepted', { queue: decision.message.queue });
    metrics.addMetric(METRIC.Accepted, MetricUnit.Count, 1);
    // CRM versions older than FieldValues: applied all the same, counted to see who still sends them.
    if (decision.olderShape) metrics.addMetric(METRIC.OlderPayloadShape, MetricUnit.Count, 1);
  } else if (decision.kind === 'test') {
    // Once per webhook saved in the CRM: worth a line, and a metric to see registrations by.
    logger.info('registration test answered 200; nothing queued');
    metrics.addMetric(METRIC.RegistrationTests, MetricUnit.Count, 1);
  } else if (decision.kind === 'park') {
    logger.warn('parked', { reason: decision.reason, detail: decision.detail });
    metrics.addMetric(METRIC.Parked, MetricUnit.Count, 1);
  } else {
    logger.warn('refused', { status: decision.status, reason: decision.reason, detail: decision.detail });
    metrics.addMetric(METRIC.Refused, MetricUnit.Count, 1);
    metrics
      .singleMetric()
      .addDimension('reason', decision.reason)
      .addMetric(METRIC.RefusedByReason, MetricUnit.Count, 1);
  }
}
