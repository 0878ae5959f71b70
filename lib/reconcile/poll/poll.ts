import type { Logger } from '@aws-lambda-powertools/logger';
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { EventPublisher } from '../../bus/publisher.js';
import type { WatchConfig } from '../../config/watch.js';
import { CrmApiError, type CrmClient, CrmRetryLater, type CrmWebhook } from '../../crm/index.js';
import { eachLimited } from '../../each-limited.js';
import { METRIC } from '../../metrics.js';
import type { LastAccepted } from '../../model/types.js';
import type { WatchMemory, WatchStore } from '../../store/watch-memory.js';
import { type LifecycleDetails, lifecycleEntry } from '../records/lifecycle.js';
import { type ReactivationRecorder, recordReactivation } from '../records/recovery.js';
import type { ReconcileQueue, ReconcileRequest } from '../request.js';
import { windowStart } from '../triggers/gap.js';
import { ALERT_AFTER_ATTEMPTS, decideWebhook, type Observed, REACTIVATION_LASTS_POLLS } from './decide.js';
import { requestFullPass } from './full-pass.js';
import { enqueue, pendingOf, withPending } from './pending.js';

export interface PollDeps {
  crm: Pick<CrmClient, 'listWebhooks' | 'webhookUsage' | 'webhookLastError' | 'activateWebhook'>;
  store: WatchStore;
  /** Where a window starts for a webhook first seen not Active (the webhooks table's markers). */
  lastAccepted: (context: string, webhookName: string) => Promise<LastAccepted | undefined>;
  queue: ReconcileQueue;
  publisher?: EventPublisher | undefined;
  /** Where a reactivation is recorded for the gap's card; absent: not recorded. */
  recovery?: ReactivationRecorder | undefined;
  config: WatchConfig;
  /** Whether the CRM credentials cover a context (its own entry or `*`); absent: every context. */
  covers?: (context: string) => boolean;
  logger: Logger;
  metrics: Metrics;
  now?: () => number;
}

export interface PollReport {
  /** False when another poll had claimed this interval: nothing was done. */
  polled: boolean;
  webhooks: number;
  enqueued: number;
  reactivated: number;
  /** Scheduled full passes requested (RECONCILE_FULL_HOURS), counted in `enqueued` too. */
  fullPasses: number;
  /** Contexts whose poll failed (logged), or was cut short by the time budget or the CRM (polled next time). */
  failed: string[];
  unfinished: string[];
  /** Contexts left out: no CRM credentials cover them (a local throwaway context, a tenant not set up). */
  uncovered: number;
}

/**
 * One poll of the receiver's webhooks in the CRM, at most once per
 * RECONCILE_POLL_SECONDS whoever calls it. The receiver's webhooks are the CRM's webhooks of each
 * context named as its deliveries were (and aimed at RECEIVER_URL when set); for each, the state and
 * error counters against the last poll ({@link decideWebhook}) may enqueue a reconcile (reason `poll`) and
 * set it Active again. Each decision is written (conditionally) before it is acted on, so two polls
 * at once act once, and a request written but not sent is sent by the next poll. With
 * RECONCILE_FULL_HOURS, each context's full pass is requested when due, the same way ({@link requestFullPass}). Only
 * contexts the credentials cover are polled, RECONCILE_POLL_MAX_IN_FLIGHT at once (one CRM request
 * each at a time); a CRM that does not answer costs its context, within the CRM client's time budget.
 */
export async function pollWebhooks(deps: PollDeps): Promise<PollReport> {
  const now = deps.now ?? Date.now;
  const report: PollReport = {
    polled: false,
    webhooks: 0,
    enqueued: 0,
    reactivated: 0,
    fullPasses: 0,
    failed: [],
    unfinished: [],
    uncovered: 0,
  };
  if (!(await deps.store.claimPoll(now(), deps.config.pollSeconds * 1000))) return report;
  report.polled = true;
  const all = await deps.store.deliveryNames();
  const names = shuffled([...all].filter(([context]) => deps.covers?.(context) ?? true));
  report.uncovered = all.size - names.length;
  // One context's calls follow each other: the pool bounds the CRM requests in flight across contexts.
  await eachLimited(names, deps.config.pollMaxInFlight, async ([context, known]) => {
    try {
      const observedAt = now();
      const webhooks = (await deps.crm.listWebhooks(context)).filter(
        (webhook) => known.has(webhook.Name) && aimedAtReceiver(webhook, deps.config.receiverUrl),
      );
      for (const webhook of webhooks) {
        report.webhooks++;
        await watchWebhook(deps, context, webhook, observedAt, report);
      }
      await requestFullPass(deps, context, report);
    } catch (error) {
      const cut = error instanceof CrmRetryLater;
      (cut ? report.unfinished : report.failed).push(context);
      if (!cut) deps.metrics.addMetric(METRIC.WebhookPollFailures, MetricUnit.Count, 1);
      deps.logger.warn(cut ? 'poll of a context cut short: polled next time' : 'poll of a context failed', {
        context,
        error: (error as Error).message,
      });
    }
  });
  return report;
}

/**
 * In a new order each poll: tenants that never answer hold a runner up to the time budget each, and
 * in a fixed order they would leave the same contexts after them unpolled at every poll.
 */
function shuffled<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

function aimedAtReceiver(webhook: CrmWebhook, receiverUrl: string | undefined): boolean {
  return receiverUrl === undefined || webhook.TargetUrl.startsWith(receiverUrl);
}

async function watchWebhook(
  deps: PollDeps,
  context: string,
  webhook: CrmWebhook,
  observedAt: number,
  report: PollReport,
) {
  const now = deps.now ?? Date.now;
  const { crm, logger } = deps;
  const store = stamping(deps.store, now);
  const id = webhook.WebhookId;
  const usage = await crm.webhookUsage(context, id);
  const seen: Observed = {
    context,
    webhookId: id,
    state: webhook.State,
    totalErrors: usage?.totalErrors ?? 0,
    lastError: usage?.lastError ?? (await crm.webhookLastError(context, id)),
  };
  const { item: memory, version } = await store.load(context, id);
  if (memory?.writtenAt !== undefined && memory.writtenAt >= observedAt) {
    logger.info('another poll read the CRM later: its decision stands', { context, webhookId: id });
    return;
  }
  // Requests an earlier poll wrote and may not have sent (it stopped in between): sent again, deduplicated.
  for (const request of pendingOf(memory)) await enqueue(deps, request, report);

  const accepted = memory === undefined ? await deps.lastAccepted(context, webhook.Name) : undefined;
  // As of when the CRM was read (errs early: a failure counted after it opens the next window from here).
  const step = decideWebhook(memory, seen, observedAt, {
    pollMs: deps.config.pollSeconds * 1000,
    reactivate: deps.config.reactivate,
    lastAcceptedAt: accepted && Date.parse(accepted.timestamp),
  });
  const pending = step.request === undefined ? [] : [step.request];
  if (!(await store.save(context, id, withPending(step.next, pending), version))) {
    logger.info('another poll is handling this webhook', { context, webhookId: id });
    return;
  }
  let after = step.next;
  if (step.activate) {
    const done = await reactivate(deps, webhook, context, step.next, report);
    if ('request' in done) {
      // Its window covers the one the webhook's leaving Active opened (left pending if this stops here).
      await enqueue(deps, done.request, report);
      await store.save(context, id, done.memory, version + 1);
      await announce(deps, done.reactivated);
      await recordReactivation(deps.recovery, done.reactivated, done.request.requestedAt, logger);
      return;
    }
    after = done.memory;
  }
  for (const request of pending) await enqueue(deps, request, report);
  // Over the version written above: if another poll wrote meanwhile, its memory stands (it saw the CRM later).
  if (after !== step.next || pending.length > 0) await store.save(context, id, after, version + 1);
}

/**
 * Sets the webhook Active (the CRM's test delivery must be answered 200 first). Succeeded: the
 * reconcile of its gap to now, `receiver.webhook.reactivated`, and its memory as Active, its attempts
 * kept until it lasts. Failed: counted and logged. Either way alerted once after
 * {@link ALERT_AFTER_ATTEMPTS} attempts in a row that failed or did not last. Changed in the CRM since
 * the poll read it (409, a person set its state): not counted as failed, the next poll decides.
 */
async function reactivate(
  deps: PollDeps,
  webhook: CrmWebhook,
  context: string,
  memory: WatchMemory,
  report: PollReport,
): Promise<
  | {
      request: ReconcileRequest;
      memory: WatchMemory;
      reactivated: LifecycleDetails['receiver.webhook.reactivated'];
    }
  | { memory: WatchMemory }
> {
  const { logger, metrics } = deps;
  const webhookId = webhook.WebhookId;
  const attempts = memory.attempts ?? 1;
  try {
    // Only while it is as this poll read it: a person who stopped it since is not overruled.
    await deps.crm.activateWebhook(context, webhookId, webhook);
  } catch (error) {
    const message = (error as Error).message;
    if (error instanceof CrmApiError && error.status === 409) {
      // No failure: the next poll decides from what it reads; a CRM that always answers so is still alerted.
      logger.info('webhook changed in the CRM since this poll read it: the next poll decides', {
        context,
        webhookId,
      });
      return { memory: alertOnce(deps, webhook, context, memory, message) };
    }
    metrics.addMetric(METRIC.ReactivationFailures, MetricUnit.Count, 1);
    logger.warn('webhook not set Active again; retried with backoff', {
      context,
      webhookId,
      attempts,
      error: message,
    });
    return { memory: alertOnce(deps, webhook, context, memory, message) };
  }
  const activatedAt = (deps.now ?? Date.now)();
  report.reactivated++;
  metrics.addMetric(METRIC.WebhooksReactivated, MetricUnit.Count, 1);
  const from = new Date(memory.lastHealthyAt).toISOString();
  logger.info('webhook set Active again', { context, webhookId, from });
  return {
    reactivated: { context, webhookId, webhookName: webhook.Name, from },
    request: {
      context,
      reason: 'poll',
      from: windowStart(memory.lastHealthyAt),
      webhookId,
      requestedAt: new Date(activatedAt).toISOString(),
    },
    // On probation: its attempts keep counting until it has stayed Active a while (lib/reconcile/poll/decide.ts).
    memory: alertOnce(
      deps,
      webhook,
      context,
      { ...memory, state: 'Active', lastHealthyAt: activatedAt, reactivatedAt: activatedAt },
      `set Active ${attempts} times in a row, each time disabled again within ${REACTIVATION_LASTS_POLLS} polls: its test delivery passes, its real deliveries fail`,
    ),
  };
}

/**
 * After {@link ALERT_AFTER_ATTEMPTS} re-activations in a row that failed or did not last: the error
 * line (which webhook and why) and `WebhookNotReactivated`, whose alarm tells the alert topic
 * (infra/alarms.ts); once, until the webhook has stayed Active.
 */
function alertOnce(
  deps: PollDeps,
  webhook: CrmWebhook,
  context: string,
  memory: WatchMemory,
  error: string,
): WatchMemory {
  const attempts = memory.attempts ?? 1;
  if (attempts < ALERT_AFTER_ATTEMPTS || memory.alerted) return memory;
  deps.logger.error(
    'webhook could not be set Active again: it stays disabled until this succeeds or a person acts',
    {
      context,
      webhookId: webhook.WebhookId,
      webhookName: webhook.Name,
      state: webhook.State,
      attempts,
      error,
    },
  );
  deps.metrics.addMetric(METRIC.WebhookNotReactivated, MetricUnit.Count, 1);
  return { ...memory, alerted: true };
}

/** `receiver.webhook.reactivated` on the bus; a failed publish is logged and counted (the reconcile is enqueued already). */
async function announce(deps: PollDeps, detail: LifecycleDetails['receiver.webhook.reactivated']) {
  if (deps.publisher === undefined) return;
  const results = await deps.publisher
    .publish([lifecycleEntry('receiver.webhook.reactivated', detail)])
    .catch((error: Error) => [{ ok: false as const, errorCode: error.name, errorMessage: error.message }]);
  const failed = results.find((result) => !result.ok);
  if (failed === undefined) return;
  deps.metrics.addMetric(METRIC.PublishFailures, MetricUnit.Count, 1);
  deps.logger.warn('receiver.webhook.reactivated not published', { ...detail, failure: failed });
}

/** The store writing each memory with the time it is written. */
function stamping(store: WatchStore, now: () => number): WatchStore {
  return {
    ...store,
    save: (context, id, memory, version) => store.save(context, id, { ...memory, writtenAt: now() }, version),
  };
}
