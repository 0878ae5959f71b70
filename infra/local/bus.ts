/**
 * The local event bus of `npm start`: what EventBridge and the rules of subscriptions.yml do on AWS.
 * It takes the workers' PutEvents entries (it is an {@link EventPublisher}), wraps each in the JSON
 * EventBridge sends, matches it against every subscription's pattern and delivers it:
 *
 * - `url`: POSTed as is, with the subscription's auth header (its value from `auth.env`) and retry
 *   policy (EventBridge's exponential backoff with jitter, bounded by `backoff`), then to the
 *   subscription's DLQ, kept in memory and shown by {@link LocalBus.view};
 * - `queue`: sent to `<service>-<stage>-<queue>` on the local SQS emulator;
 * - `lambda`: not delivered (AWS only), said once at start in {@link LocalBus.notices}.
 *
 * Like PutEvents, `publish` answers once the bus has the entries; delivery happens afterwards.
 */
import { randomUUID } from 'node:crypto';
import { CreateQueueCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { BusEntry } from '../../lib/bus/entry.js';
import { BusError } from '../../lib/bus/errors.js';
import type { EventPublisher, PublishResult } from '../../lib/bus/publisher.js';
import type { Subscription } from '../../lib/bus/subscriptions.js';
import { JsonText, stringifyExact } from '../../lib/json-text.js';
import { SERVICE } from '../definitions.js';

export interface LocalBusOptions {
  subscriptions: readonly Subscription[];
  /** The SQS emulator's client; needed when a subscription has a `queue` target. */
  sqs?: SQSClient;
  /** Queue names are `<service>-<stage>-<queue>`; default crm-webhook-receiver and local. */
  service?: string;
  stage?: string;
  account?: string;
  region?: string;
  /** Where `auth.env` is read; default process.env. */
  env?: Record<string, string | undefined>;
  /** Delay before retry n: about baseMs × 2^(n-1), capped at maxMs, with jitter. Default 1 s, 60 s. */
  backoff?: { baseMs: number; maxMs: number };
  /** How long a POST may take, as for an API destination: default 5 s. */
  timeoutMs?: number;
  /** How many recent deliveries and failures each view keeps (default 50); the DLQ keeps 10,000. */
  keep?: number;
}

export interface DeliveryView {
  id: string;
  eventId: string | undefined;
  detailType: string;
  attempts: number;
  at: string;
}

export interface FailureView {
  id: string;
  eventId: string | undefined;
  attempt: number;
  error: string;
  at: string;
}

export interface DeadLetterView extends DeliveryView {
  error: string;
  /** The event as it would have been sent (JSON text). */
  event: string;
}

/** One subscription's activity, for the admin API. Lists are newest first. */
export interface SubscriptionView {
  name: string;
  /** Its EventBridge event pattern, as in subscriptions.yml. */
  pattern: Record<string, unknown>;
  target: string;
  matched: number;
  delivered: number;
  inFlight: number;
  recent: DeliveryView[];
  failures: FailureView[];
  dlq: DeadLetterView[];
  /** Dead letters dropped from the view because the DLQ holds 10,000 at most. */
  dlqDropped: number;
}

export interface LocalBus extends EventPublisher {
  /** One line per subscription the local bus does not deliver (lambda targets). */
  readonly notices: string[];
  view(): SubscriptionView[];
  /** Resolves when no delivery is under way (retries included). */
  idle(): Promise<void>;
  /** Stops: deliveries waiting for a retry go to their DLQ. */
  close(): Promise<void>;
}

const DLQ_LIMIT = 10_000;

interface Published {
  id: string;
  text: string;
  event: { 'detail-type': string; detail?: { EventId?: unknown } };
}

type Attempt = { ok: true } | { ok: false; retryable: boolean; error: string };

interface State {
  subscription: Subscription;
  send: (event: Published) => Promise<Attempt>;
  view: SubscriptionView;
}

/** Starts the bus: checks auth variables and creates the queues of `queue` targets. */
export async function startLocalBus(options: LocalBusOptions): Promise<LocalBus> {
  const { subscriptions, env = process.env, backoff = { baseMs: 1000, maxMs: 60_000 } } = options;
  const keep = options.keep ?? 50;
  const account = options.account ?? '000000000000';
  const region = options.region ?? 'us-east-1';
  const notices: string[] = [];
  const states: State[] = [];
  for (const subscription of subscriptions) {
    const send = await sender(subscription, options, env, notices);
    states.push({ subscription, send, view: emptyView(subscription) });
  }

  const inFlight = new Set<Promise<void>>();
  const sleeps = new Set<() => void>();
  let closed = false;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        sleeps.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      sleeps.add(wake);
    });

  const deliver = async (state: State, event: Published): Promise<void> => {
    const { subscription, view } = state;
    const started = Date.now();
    const eventId = typeof event.event.detail?.EventId === 'string' ? event.event.detail.EventId : undefined;
    const base = { id: event.id, eventId, detailType: event.event['detail-type'] };
    for (let attempt = 1; ; attempt++) {
      const result = await state.send(event);
      const at = new Date().toISOString();
      if (result.ok) {
        view.delivered++;
        push(view.recent, { ...base, attempts: attempt, at }, keep);
        return;
      }
      push(view.failures, { id: event.id, eventId, attempt, error: result.error, at }, keep);
      const delay = retryDelay(attempt, backoff);
      const expired = Date.now() + delay - started > subscription.retry.maxAgeSeconds * 1000;
      if (closed || !result.retryable || attempt > subscription.retry.attempts || expired) {
        if (view.dlq.length === DLQ_LIMIT) {
          view.dlq.pop();
          view.dlqDropped++;
        }
        const error = closed ? `${result.error} (bus closed)` : result.error;
        view.dlq.unshift({ ...base, attempts: attempt, at, error, event: event.text });
        return;
      }
      await sleep(delay);
    }
  };

  return {
    notices,
    async publish(entries: readonly BusEntry[]): Promise<PublishResult[]> {
      return entries.map((entry): PublishResult => {
        if (closed) return { ok: false, errorCode: 'BusClosed', errorMessage: 'the local bus is closed' };
        const event = wrap(entry, account, region);
        for (const state of states) {
          if (!state.subscription.matches(event.event)) continue;
          state.view.matched++;
          if ('lambda' in state.subscription.target) continue;
          state.view.inFlight++;
          const delivery = deliver(state, event).finally(() => {
            state.view.inFlight--;
            inFlight.delete(delivery);
          });
          inFlight.add(delivery);
        }
        return { ok: true, eventId: event.id };
      });
    },
    view: () => states.map(({ view }) => structuredClone(view)),
    async idle() {
      while (inFlight.size > 0) await Promise.all(inFlight);
    },
    async close() {
      closed = true;
      for (const wake of [...sleeps]) wake();
      while (inFlight.size > 0) await Promise.all(inFlight);
    },
  };
}

/** The JSON EventBridge sends to a target, with the entry's Detail text kept verbatim. */
function wrap(entry: BusEntry, account: string, region: string): Published {
  const id = randomUUID();
  const text = stringifyExact({
    version: '0',
    id,
    'detail-type': entry.DetailType,
    source: entry.Source,
    account,
    time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region,
    resources: [],
    detail: new JsonText(entry.Detail),
  });
  return { id, text, event: JSON.parse(text) };
}

/** EventBridge's backoff: exponential with jitter (here between half and all of the step). */
export function retryDelay(attempt: number, backoff: { baseMs: number; maxMs: number }): number {
  const step = Math.min(backoff.maxMs, backoff.baseMs * 2 ** (attempt - 1));
  return step / 2 + Math.random() * (step / 2);
}

async function sender(
  subscription: Subscription,
  options: LocalBusOptions,
  env: Record<string, string | undefined>,
  notices: string[],
): Promise<(event: Published) => Promise<Attempt>> {
  const { name, target, auth } = subscription;
  if ('lambda' in target) {
    notices.push(
      `subscription "${name}": lambda targets are delivered on AWS only; the local bus counts its matches`,
    );
    return async () => ({ ok: false, retryable: false, error: 'not delivered locally' });
  }
  if ('queue' in target) {
    const { sqs } = options;
    if (sqs === undefined)
      throw new BusError(`subscription "${name}": a queue target needs the local SQS client`);
    const queueName = `${options.service ?? SERVICE}-${options.stage ?? 'local'}-${target.queue}`;
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: queueName }));
    return async (event) => {
      try {
        await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: event.text }));
        return { ok: true };
      } catch (error) {
        return { ok: false, retryable: true, error: `SendMessage: ${(error as Error).message}` };
      }
    };
  }
  const headers: Record<string, string> = {
    'content-type': 'application/json; charset=utf-8',
    'user-agent': 'Amazon/EventBridge/ApiDestinations',
  };
  if (auth !== undefined) {
    const value = env[auth.env];
    if (value === undefined || value === '') {
      throw new BusError(
        `subscription "${name}": set ${auth.env}, the value of its ${auth.header} header locally`,
      );
    }
    headers[auth.header] = value;
  }
  const timeoutMs = options.timeoutMs ?? 5000;
  return async (event) => {
    try {
      const response = await fetch(target.url, {
        method: 'POST',
        headers,
        body: event.text,
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
      await response.arrayBuffer();
      if (response.status >= 200 && response.status < 300) return { ok: true };
      return {
        ok: false,
        retryable: RETRIED.has(response.status) || response.status >= 500,
        error: `HTTP ${response.status}`,
      };
    } catch (error) {
      const cause = (error as Error & { cause?: { code?: string } }).cause?.code;
      return { ok: false, retryable: true, error: cause ?? (error as Error).message };
    }
  };
}

/** The 4xx answers an API destination retries (with every 5xx and network error); others go to the DLQ. */
const RETRIED = new Set([401, 407, 409, 429]);

function emptyView({ name, pattern, target }: Subscription): SubscriptionView {
  const description =
    'url' in target ? target.url : 'queue' in target ? `queue ${target.queue}` : target.lambda;
  return {
    name,
    pattern,
    target: description,
    matched: 0,
    delivered: 0,
    inFlight: 0,
    recent: [],
    failures: [],
    dlq: [],
    dlqDropped: 0,
  };
}

function push<T>(list: T[], item: T, keep: number): void {
  list.unshift(item);
  if (list.length > keep) list.pop();
}
