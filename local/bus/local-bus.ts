/**
 * The local event bus of `npm start`: what EventBridge and the rules of subscriptions.yml do on AWS.
 * It takes the workers' PutEvents entries (it is an EventPublisher), wraps each in the JSON
 * EventBridge sends, matches it against every subscription's pattern and delivers it (targets.ts):
 *
 * - `url`: POSTed as is, with the subscription's auth header (its value from `auth.env`) and retry
 *   policy (EventBridge's exponential backoff with jitter, bounded by `backoff`), then to the
 *   subscription's DLQ, shown by {@link LocalBus.view};
 * - `queue`: sent to `<service>-<stage>-<queue>` on the local SQS emulator;
 * - `lambda`: not delivered (AWS only), said once at start in {@link LocalBus.notices}.
 *
 * Like PutEvents, `publish` answers once the bus has the entries, and then they are not lost: each
 * delivery an entry matched is journaled (journaled-queues.ts, `journalPath`) before `publish`
 * returns, with its attempts as they are made and its move to the DLQ, so a killed or stopped process
 * delivers the rest after its next start. At most `maxInFlight` deliveries per target are under way
 * at once; the others wait their turn, as EventBridge holds events back to an API destination's
 * invocation rate. An entry the bus cannot take fails alone (InternalFailure), never its batch.
 */
import { SERVICE } from '../../infra/definitions.js';
import type { BusEntry } from '../../lib/bus/entry.js';
import type { PublishResult } from '../../lib/bus/publisher.js';
import type { Subscription } from '../../lib/bus/subscriptions.js';
import {
  type Delivery,
  deliveryOf,
  dlqOf,
  fromRecord,
  idOf,
  keyOf,
  toRecord,
  viewOf,
  wrap,
} from './deliveries.js';
import { type JournaledQueues, openJournaledQueues } from './journaled-queues.js';
import { startTarget, type Target } from './targets.js';
import type { LocalBus, LocalBusOptions } from './types.js';
import { addDeadLetter, emptyView, pushRecent, type SubscriptionView } from './views.js';

interface State {
  subscription: Subscription;
  /** Undefined for a lambda target. */
  target: Target | undefined;
  view: SubscriptionView;
  /** Due now, oldest first, waiting for one of the `maxInFlight` places. */
  ready: Set<Delivery>;
  running: number;
}

/**
 * Starts the bus: checks auth variables, creates the queues of `queue` targets, opens the journal and
 * resumes the deliveries it holds (their dead letters back in the views).
 */
export async function startLocalBus(options: LocalBusOptions): Promise<LocalBus> {
  const { subscriptions, env = process.env, backoff = { baseMs: 1000, maxMs: 60_000 } } = options;
  const keep = options.keep ?? 50;
  const maxInFlight = options.maxInFlight ?? 16;
  const account = options.account ?? '000000000000';
  const region = options.region ?? 'us-east-1';
  const targetOptions = {
    ...(options.sqs && { sqs: options.sqs }),
    prefix: `${options.service ?? SERVICE}-${options.stage ?? 'local'}`,
    env,
    timeoutMs: options.timeoutMs ?? 5000,
    maxInFlight,
  };
  const notices: string[] = [];
  const states: State[] = [];
  for (const subscription of subscriptions) {
    const target = await startTarget(subscription, targetOptions);
    if (target === undefined) {
      notices.push(
        `subscription "${subscription.name}": lambda targets are delivered on AWS only; the local bus counts its matches`,
      );
    }
    states.push({ subscription, target, view: emptyView(subscription), ready: new Set(), running: 0 });
  }
  const journal: JournaledQueues = openJournaledQueues(options.journalPath);
  /** Deliveries an erasure dropped: one under way, or waiting for its retry, ends there. */
  const erased = new Set<string>();

  let pending = 0;
  let closed = false;
  const stopping = new AbortController();
  const attempts = new Set<Promise<void>>();
  const timers = new Set<NodeJS.Timeout>();
  const idlers: (() => void)[] = [];

  const enqueue = (state: State, delivery: Delivery) => {
    state.view.inFlight++;
    pending++;
    state.ready.add(delivery);
    pump(state);
  };

  const done = (state: State) => {
    state.view.inFlight--;
    if (--pending === 0) for (const resolve of idlers.splice(0)) resolve();
  };

  /** Starts what is ready, up to `maxInFlight` under way. */
  const pump = (state: State) => {
    for (const delivery of state.ready) {
      if (closed || state.running >= maxInFlight) return;
      state.ready.delete(delivery);
      state.running++;
      const attempt = deliver(state, delivery)
        // The journal could not be written (a full disk): the delivery is tried again later.
        .catch(() => later(state, delivery, backoff.maxMs))
        .finally(() => {
          state.running--;
          attempts.delete(attempt);
          pump(state);
        });
      attempts.add(attempt);
    }
  };

  const deliver = async (state: State, delivery: Delivery): Promise<void> => {
    const { subscription, view } = state;
    const { name, retry } = subscription;
    const maxAgeMs = retry.maxAgeSeconds * 1000;
    if (erased.has(delivery.key)) {
      done(state);
      return;
    }
    if (Date.now() - delivery.acceptedAt > maxAgeMs) {
      deadLetter(state, delivery, `not delivered within retry.maxAgeSeconds (${retry.maxAgeSeconds} s)`);
      return;
    }
    const result = await state.target!.send(delivery.text, stopping.signal);
    // Stopped during the attempt: it stays journaled and is made again after the next start.
    if (closed) return;
    delivery.attempts++;
    const at = new Date().toISOString();
    const { eventId, context } = delivery;
    if (result.ok) {
      journal.remove(name, delivery.key);
      view.delivered++;
      pushRecent(view.recent, { ...viewOf(delivery), attempts: delivery.attempts, at }, keep);
      done(state);
      return;
    }
    journal.received(name, delivery.key, delivery.attempts);
    pushRecent(
      view.failures,
      {
        id: idOf(delivery),
        eventId,
        ...(context !== undefined && { context }),
        attempt: delivery.attempts,
        error: result.error,
        at,
      },
      keep,
    );
    const delay = retryDelay(delivery.attempts, backoff);
    const expired = Date.now() + delay - delivery.acceptedAt > maxAgeMs;
    if (!result.retryable || delivery.attempts > retry.attempts || expired) {
      deadLetter(state, delivery, result.error);
      return;
    }
    later(state, delivery, delay);
  };

  /** Makes the delivery ready again after `delay` ms. */
  const later = (state: State, delivery: Delivery, delay: number) => {
    if (closed) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      state.ready.add(delivery);
      pump(state);
    }, delay);
    timers.add(timer);
  };

  const deadLetter = (state: State, delivery: Delivery, error: string) => {
    const { name } = state.subscription;
    if (erased.has(delivery.key)) {
      done(state);
      return;
    }
    const at = new Date().toISOString();
    journal.put(dlqOf(name), toRecord(delivery, { error, at }));
    addDeadLetter(state.view, { ...viewOf(delivery), at, error, event: delivery.text }, (dropped) =>
      journal.remove(dlqOf(name), keyOf(name, dropped.id)),
    );
    done(state);
  };

  let resumed = 0;
  for (const state of states) {
    const { name } = state.subscription;
    for (const record of journal.state.get(dlqOf(name))?.values() ?? []) {
      const { error = '', at = '' } = record.attributes;
      const delivery = fromRecord(record);
      addDeadLetter(state.view, { ...viewOf(delivery), at, error, event: delivery.text }, () => undefined);
    }
    if (state.target === undefined) continue;
    for (const record of journal.state.get(name)?.values() ?? []) {
      enqueue(state, fromRecord(record));
      resumed++;
    }
  }
  if (resumed > 0) notices.push(`resumed ${resumed} deliveries from ${options.journalPath}`);
  const known = new Set(
    states.flatMap(({ subscription: { name }, target }) => (target ? [name, dlqOf(name)] : [])),
  );
  let kept = 0;
  for (const [queue, records] of journal.state) if (!known.has(queue)) kept += records.size;
  if (kept > 0) {
    notices.push(`kept ${kept} journaled deliveries of subscriptions this file does not deliver locally`);
  }

  return {
    notices,
    async publish(entries: readonly BusEntry[]): Promise<PublishResult[]> {
      return entries.map((entry): PublishResult => {
        if (closed) return { ok: false, errorCode: 'BusClosed', errorMessage: 'the local bus is closed' };
        try {
          const event = wrap(entry, account, region);
          const matched = states.filter((state) => state.subscription.matches(event.parsed));
          for (const state of matched) {
            state.view.matched++;
            if (state.target === undefined) continue;
            const delivery = deliveryOf(state.subscription.name, event);
            journal.put(state.subscription.name, toRecord(delivery));
            enqueue(state, delivery);
          }
          return { ok: true, eventId: event.id };
        } catch (error) {
          return {
            ok: false,
            errorCode: 'InternalFailure',
            errorMessage: `the local bus could not take this entry: ${(error as Error).message}`,
          };
        }
      });
    },
    view: () => states.map(({ view }) => structuredClone(view)),
    erase(carries) {
      let dropped = 0;
      for (const { subscription, view } of states) {
        for (const queue of [subscription.name, dlqOf(subscription.name)]) {
          for (const record of [...(journal.state.get(queue)?.values() ?? [])]) {
            const delivery = fromRecord(record);
            if (!carries(delivery.text)) continue;
            journal.remove(queue, delivery.key);
            erased.add(delivery.key);
            view.dlq = view.dlq.filter((letter) => letter.id !== idOf(delivery));
            dropped++;
          }
        }
      }
      return dropped;
    },
    async idle() {
      if (pending > 0 && !closed) await new Promise<void>((resolve) => idlers.push(resolve));
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const resolve of idlers.splice(0)) resolve();
      for (const timer of timers) clearTimeout(timer);
      stopping.abort();
      await Promise.allSettled([...attempts]);
      for (const { target } of states) target?.close();
      journal.close();
    },
  };
}

/** EventBridge's backoff: exponential with jitter (here between half and all of the step). */
export function retryDelay(attempt: number, backoff: { baseMs: number; maxMs: number }): number {
  const step = Math.min(backoff.maxMs, backoff.baseMs * 2 ** (attempt - 1));
  return step / 2 + Math.random() * (step / 2);
}
