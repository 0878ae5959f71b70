import type { Logger } from '@aws-lambda-powertools/logger';
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { TOO_MANY_ERRORS, type WebhookStateEvent } from '../events/index.js';
import { type Hooks, type Outcome, runHook } from '../hooks.js';
import { METRIC, OUTCOME_METRIC } from '../metrics.js';
import { eventSeq } from '../model/order-key.js';
import type { Webhook } from '../model/types.js';
import { VersionConflictError } from '../store/errors.js';
import type { StoreWriter } from '../store/types.js';
import { applyStateEvent } from '../webhook-state.js';
import type { AlertPublisher } from './alerts.js';
import { type BusDecision, decideBus } from './bus-decision.js';
import { ContentionError, HookError } from './errors.js';
import type { Publication } from './publish.js';
import type { DeliveryMeta } from './record.js';

export type WebhookStore = Pick<StoreWriter, 'getLastAccepted' | 'loadWebhook' | 'saveWebhook'>;

export interface StateWorkerDeps {
  store: WebhookStore;
  hooks: Hooks;
  /** SNS when ALERT_TOPIC_ARN is set; the error log and the metric happen regardless. */
  alerts?: AlertPublisher | undefined;
  logger: Logger;
  metrics: Metrics;
  maxAttempts?: number;
  /** How changes are published (PUBLISH_EVENTS); absent: none is. */
  publication?: Publication | undefined;
}

export interface StateResult {
  webhook: Webhook;
  outcome: Outcome;
  enteredTooManyErrors: boolean;
  /** The event's order key. */
  seq: string;
  /**
   * Whether its change goes on the bus, or why not ({@link decideBus}). A state event has no history
   * record: its duplicate publishes when the SQS message is a redelivery (ApproximateReceiveCount > 1).
   */
  bus: BusDecision;
}

/**
 * Merges one webhook state event into the webhook's item (one put conditioned on the version read).
 * When the webhook enters TooManyErrors, logs at error level, emits `WebhookTooManyErrors` and
 * publishes the alert *before* the write, so a crash in between re-alerts rather than stays silent.
 */
export async function processStateEvent(
  deps: StateWorkerDeps,
  event: WebhookStateEvent,
  meta: DeliveryMeta,
): Promise<StateResult> {
  const { store, logger, metrics } = deps;
  const seq = eventSeq(event);
  const lastAccepted = await store.getLastAccepted(event.ContextIdentifier, event.WebhookName);
  const attempts = deps.maxAttempts ?? 5;

  for (let attempt = 1; attempt <= attempts; attempt++) {
    const { item, version } = await store.loadWebhook(event.ContextIdentifier, event.PrimaryKey);
    const next = applyStateEvent(item, event, { lastAccepted });
    if (item !== undefined && next === item) {
      return finish(deps, event, meta, {
        webhook: item,
        outcome: 'duplicate',
        enteredTooManyErrors: false,
        seq,
      });
    }
    const enteredTooManyErrors = next.state === TOO_MANY_ERRORS && item?.state !== TOO_MANY_ERRORS;
    if (enteredTooManyErrors) {
      logger.error('webhook entered TooManyErrors: the sender has stopped delivering', {
        context: next.context,
        webhookId: next.webhookId,
        webhookName: next.webhookName,
        eventId: event.EventId,
        stateChangedAt: next.stateChangedAt,
      });
      metrics.addMetric(METRIC.WebhookTooManyErrors, MetricUnit.Count, 1);
      await deps.alerts?.webhookTooManyErrors(next);
    }
    try {
      await store.saveWebhook(next, version);
      if (item?.state !== next.state) {
        logger.info('webhook state changed', {
          context: next.context,
          webhookId: next.webhookId,
          from: item?.stateName,
          to: next.stateName,
        });
      }
      const outcome: Outcome = next.lastSeq === seq ? 'applied' : 'late';
      return finish(deps, event, meta, { webhook: next, outcome, enteredTooManyErrors, seq });
    } catch (error) {
      if (!(error instanceof VersionConflictError)) throw error;
      logger.warn('webhook changed while merging, retrying', { eventId: event.EventId, attempt });
    }
  }
  throw new ContentionError(meta.messageId, event.EventId, attempts);
}

async function finish(
  deps: StateWorkerDeps,
  event: WebhookStateEvent,
  meta: DeliveryMeta,
  result: Omit<StateResult, 'bus'>,
): Promise<StateResult> {
  deps.metrics.addMetric(OUTCOME_METRIC[result.outcome], MetricUnit.Count, 1);
  try {
    await runHook(deps.hooks, event, result.webhook, {
      outcome: result.outcome,
      messageId: meta.messageId,
    });
  } catch (cause) {
    throw new HookError(meta.messageId, event.EventId, cause);
  }
  const publishedAlready = (meta.receiveCount ?? 1) <= 1;
  const bus = decideBus(deps.publication, { event: event.Event, ...result, echo: false, publishedAlready });
  return { ...result, bus };
}
