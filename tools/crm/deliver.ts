import { Agent } from 'node:http';
import {
  buildRegistrationTestBody,
  buildSampleBody,
  buildSampleDelivery,
  dotNetTimestamp,
} from '../samples.js';
import {
  type CycleTarget,
  countAttempt,
  deliveryCycle,
  MAX_CONSECUTIVE_FAILURES,
  postDelivery,
  REAL_RETRY_DELAYS_MS,
} from '../sender.js';
import type { RaisedEvent } from './changes.js';
import type { ContextData } from './store.js';
import { crmTime } from './tables.js';
import { STATE_VERB, stateFieldValues, type Webhook, type WebhookState } from './webhooks.js';

export interface DispatcherOptions {
  /** The header prefix (`X-SuperOffice`). */
  prefix?: string;
  retryDelaysMs?: readonly [number, number];
  maxConsecutiveFailures?: number;
  /** How long an attempt waits for an answer before it counts as failed. */
  timeoutMs?: number;
  /** Persists a context after its webhooks' counters or states moved. */
  save: (context: ContextData) => void;
  log?: (line: string) => void;
}

/** Delivers events to the webhooks registered for them, with the real sender's policy. */
export interface Dispatcher {
  /** Starts delivering `event` to every Active webhook of the context registered for it; returns how many. */
  publish(context: ContextData, event: RaisedEvent, changedBy: number, now?: Date): number;
  /** Sets a webhook's state and signals `webhook<id>.<started|stopped|errors>` to the webhooks registered for it. */
  setState(
    context: ContextData,
    webhook: Webhook,
    state: WebhookState,
    associateId: number,
    now?: Date,
  ): void;
  /** POSTs the registration check (`test`) to a target once; the status (0 for no answer). */
  test(
    context: ContextData,
    target: Pick<Webhook, 'targetUrl' | 'secret' | 'headers' | 'name'>,
  ): Promise<number>;
  /** Resolves when every delivery cycle started so far has ended and its counters are saved. */
  idle(): Promise<void>;
  close(): void;
}

/**
 * The CRM's sending side (sender-behaviour.md): each event to each webhook in one cycle of at most 3
 * attempts (tools/sender.ts `deliveryCycle`), failures counted per webhook; 9 in a row or a 410 set it
 * to TooManyErrors; an event whose cycle failed is discarded and counted. Bodies carry the webhook's
 * name and custom properties; headers its custom headers; the signature is over the exact bytes sent.
 */
export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const prefix = options.prefix ?? 'X-SuperOffice';
  const policy = { prefix, retryDelaysMs: options.retryDelaysMs ?? REAL_RETRY_DELAYS_MS };
  const maxFailures = options.maxConsecutiveFailures ?? MAX_CONSECUTIVE_FAILURES;
  const agent = new Agent({ keepAlive: true, maxSockets: 50 });
  const log = options.log ?? (() => undefined);
  const cycles = new Set<Promise<void>>();
  // Counters move on every attempt: their context is written once per turn of the event loop, not
  // once per attempt (a context of 2,000 rows takes about 10 ms to write). A counter that cannot be
  // written is logged, never a reason to stop delivering.
  const dirty = new Set<ContextData>();
  const flush = () => {
    for (const context of dirty) {
      dirty.delete(context);
      try {
        options.save(context);
      } catch (error) {
        log(`could not save ${context.name}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  };
  const save = (context: ContextData) => {
    if (dirty.size === 0) setImmediate(flush);
    dirty.add(context);
  };

  const headersOf = (webhook: Pick<Webhook, 'secret' | 'headers'>, body: Record<string, unknown>) => {
    const delivery = buildSampleDelivery(body, { secret: webhook.secret, prefix });
    return { headers: { ...webhook.headers, ...delivery.headers }, raw: delivery.body };
  };

  const send = (context: ContextData, webhook: Webhook, envelope: Record<string, unknown>) => {
    const body = { ...webhook.properties, ...envelope };
    const { headers, raw } = headersOf(webhook, body);
    webhook.eventsSent++;
    const target: CycleTarget = {
      get active() {
        return webhook.state === 'Active';
      },
      attempted(status) {
        webhook.totalCalls++;
        if (status !== 200) {
          webhook.totalErrors++;
          webhook.lastError = `${String(body.Event)} ${String(body.EventId)}: ${status === 0 ? 'no answer' : `HTTP ${status}`}`;
        }
        const counted = countAttempt(webhook.consecutiveErrors, status, maxFailures);
        webhook.consecutiveErrors = counted.consecutive;
        if (counted.stop && webhook.state === 'Active') {
          log(
            `webhook ${webhook.id} set to TooManyErrors (${counted.stop === 'gone' ? '410 Gone' : `${maxFailures} failures in a row`})`,
          );
          dispatcher.setState(context, webhook, 'TooManyErrors', 0);
        }
        save(context);
      },
    };
    const cycle = deliveryCycle(
      (sent) =>
        postDelivery(webhook.targetUrl, sent, raw, {
          agent,
          timeoutMs: options.timeoutMs,
          discardBody: true,
        }),
      headers,
      target,
      policy,
    ).then((outcome) => {
      if (outcome !== 'discarded') return;
      webhook.discarded++;
      context.discarded++;
      save(context);
    });
    cycles.add(cycle);
    void cycle.finally(() => cycles.delete(cycle));
  };

  const fanOut = (
    context: ContextData,
    name: string,
    envelopeFor: (webhook: Webhook) => Record<string, unknown>,
  ) => {
    const registered = context.webhooks.filter((webhook) => webhook.events.includes(name));
    const subscribers = registered.filter((webhook) => webhook.state === 'Active');
    for (const webhook of registered)
      if (webhook.state !== 'Active') webhook.notSent = (webhook.notSent ?? 0) + 1;
    for (const webhook of subscribers) send(context, webhook, envelopeFor(webhook));
    if (subscribers.length < registered.length) save(context);
    return subscribers.length;
  };

  const dispatcher: Dispatcher = {
    publish(context, event, changedBy, now = new Date()) {
      const timestamp = dotNetTimestamp(now);
      return fanOut(context, event.name, (webhook) => ({
        ...buildSampleBody(event.name, {
          primaryKey: event.primaryKey,
          context: context.name,
          timestamp,
          changedByAssociateId: changedBy,
          webhookName: webhook.name,
        }),
        ...event.parts,
      }));
    },
    setState(context, webhook, state, associateId, now = new Date()) {
      webhook.state = state;
      webhook.updated = crmTime(now);
      webhook.updatedAssociateId = associateId;
      if (state === 'Active') webhook.consecutiveErrors = 0;
      save(context);
      const verb = STATE_VERB[state];
      const timestamp = dotNetTimestamp(now);
      fanOut(context, `webhook${webhook.id}.${verb}`, (subscriber) => ({
        ...buildSampleBody(`webhook.${verb}`, {
          primaryKey: webhook.id,
          context: context.name,
          timestamp,
          webhookName: subscriber.name,
        }),
        FieldValues: stateFieldValues(webhook),
      }));
    },
    async test(context, target) {
      const body = buildRegistrationTestBody({ context: context.name, webhookName: target.name });
      const { headers, raw } = headersOf(target, body);
      return postDelivery(target.targetUrl, headers, raw, {
        agent,
        timeoutMs: options.timeoutMs,
        discardBody: true,
      });
    },
    async idle() {
      while (cycles.size > 0) await Promise.allSettled([...cycles]);
      flush();
    },
    close() {
      flush();
      agent.destroy();
    },
  };
  return dispatcher;
}
