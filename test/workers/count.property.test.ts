import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type RowEvent, validEvent } from '../../lib/events/index.js';
import { eventSeq } from '../../lib/model/order-key.js';
import { snapshotMessage } from '../../lib/reconcile/run/snapshot-message.js';
import type { Store } from '../../lib/store/types.js';
import { processRowEvent, type RowWorkerDeps } from '../../lib/workers/index.js';
import { inOrder } from '../support/arbitraries.js';
import { dynamoStoreForFile } from '../support/dynamo.js';
import { at, quietObservability, rowEvent } from '../support/workers.js';

/**
 * A model of one row's FIFO group: its events arrive in any order, some of them again later (exact
 * duplicates), and each processing attempt of a message may fail between the history write and the row
 * write, lose the answer of a history put that landed, or race a second handler of the same message.
 * Snapshots (`contact.reconciled`) are among the events: one that finds the row equal is neither recorded
 * nor counted, one recorded is counted, whatever it finds when its retry comes.
 * Whatever happens, once every retry and redrive is done the row counts each event of its history once;
 * in between, after each message, it counts at least the events merged and at most those recorded (an
 * event recorded but not merged yet may be counted early by a recount from the history).
 *
 * Seeds: set FC_SEED (and FC_RUNS) to replay or widen a run; a failure prints its seed and the shrunk case.
 */
const SEED = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
const RUNS = Number(process.env.FC_RUNS ?? 60);
/** About 0.2 s per passing case here (60: ~14 s, 500: ~90 s); shrinking a failure replays many cases. */
const TIMEOUT = Math.max(300_000, RUNS * 600);

/** SQS moves a message to the dead-letter queue after this many failed receives (the stack's maxReceiveCount). */
const MAX_RECEIVES = 5;

const db = dynamoStoreForFile();

/**
 * How one handler's processing of a message goes wrong:
 * - `crash`: `before` — the row write throws (a crash or throttle after the history put landed);
 *   `after` — the row write lands, then the handler fails before the message is deleted (a timeout);
 * - `lostAnswer`: the history put lands but reports "already there" (the SDK retried a put whose first
 *   attempt landed and whose answer was lost).
 */
interface Fault {
  crash: 'none' | 'before' | 'after';
  lostAnswer: boolean;
}

/** One receive of a message: its handler's fault, and maybe a second handler of the same message at once. */
interface Attempt extends Fault {
  /**
   * The message's visibility timeout ran out: another handler processes it in full before this one's
   * history put (`record`) or row write (`save`), with its own fault, and when it succeeds goes on to
   * the `next` messages of the group (its batch), all before this handler's write.
   */
  twice: (Fault & { at: 'record' | 'save'; next: number }) | null;
}

interface Message {
  /** Index into the run's events. */
  event: number;
  /** Its receives in order; once these run out every receive succeeds. */
  attempts: Attempt[];
}

interface Scenario {
  /** The EventId of a `contact.created` before every other event, if there is one. */
  created: string | null;
  /** Distinct seconds of the `contact.changed` events, and their EventIds. */
  changed: { second: number; eventId: string }[];
  /**
   * `contact.reconciled` snapshots fetched at `second` with `name` as the row's name (few names, so
   * some find the row already equal: those are neither recorded nor counted).
   */
  snapshots: { second: number; name: number }[];
  /** The group's messages in arrival order (each event once, plus exact duplicates). */
  arrivals: Message[];
  /** Exact duplicates arriving after the first redrive. */
  late: Message[];
  /** Redrive order of the dead-letter queue: `null` the original order, else sort keys per message. */
  redriveKeys: number[] | null;
}

const faultArb: fc.Arbitrary<Fault> = fc.record({
  crash: fc.oneof(
    { arbitrary: fc.constant('none' as const), weight: 3 },
    { arbitrary: fc.constant('before' as const), weight: 3 },
    { arbitrary: fc.constant('after' as const), weight: 1 },
  ),
  lostAnswer: fc.oneof(
    { arbitrary: fc.constant(false), weight: 3 },
    { arbitrary: fc.constant(true), weight: 1 },
  ),
});

const attemptArb: fc.Arbitrary<Attempt> = fc
  .record({
    fault: faultArb,
    twice: fc.option(
      fc.record({
        fault: faultArb,
        at: fc.constantFrom('save' as const, 'record' as const),
        next: fc.integer({ min: 0, max: 2 }),
      }),
      { freq: 5 },
    ),
  })
  .map(({ fault, twice }) => ({
    ...fault,
    twice: twice && { ...twice.fault, at: twice.at, next: twice.next },
  }));

/** A failing receive: the row write throws and no second handler saves the message. */
const failingAttemptArb: fc.Arbitrary<Attempt> = fc
  .record({ lostAnswer: fc.boolean() })
  .map(({ lostAnswer }) => ({ crash: 'before' as const, lostAnswer, twice: null }));

/** Receives of one message: mostly a few, sometimes enough failures in a row to dead-letter it. */
const attemptsArb: fc.Arbitrary<Attempt[]> = fc.oneof(
  { arbitrary: fc.array(attemptArb, { maxLength: 6 }), weight: 5 },
  {
    arbitrary: fc
      .tuple(
        fc.array(failingAttemptArb, { minLength: MAX_RECEIVES, maxLength: MAX_RECEIVES }),
        fc.array(attemptArb, { maxLength: 6 }),
      )
      .map(([failing, rest]) => [...failing, ...rest]),
    weight: 1,
  },
);

const scenarioArb: fc.Arbitrary<Scenario> = fc
  .record({
    created: fc.boolean(),
    changed: fc
      .uniqueArray(fc.integer({ min: 1, max: 99 }), { minLength: 1, maxLength: 20, size: 'max' })
      .chain((seconds) =>
        fc
          .uniqueArray(fc.uuid({ version: 4 }), {
            minLength: seconds.length + 1,
            maxLength: seconds.length + 1,
          })
          .map((ids) => ({
            createdId: ids[0]!,
            events: seconds.map((second, i) => ({ second, eventId: ids[i + 1]! })),
          })),
      ),
    snapshots: fc.uniqueArray(
      fc.record({ second: fc.integer({ min: 0, max: 99 }), name: fc.integer({ min: 0, max: 1 }) }),
      { maxLength: 3, selector: (snapshot) => snapshot.second },
    ),
  })
  .chain(({ created, changed: { createdId, events: changed }, snapshots }) => {
    const count = changed.length + (created ? 1 : 0) + snapshots.length;
    const indices = Array.from({ length: count }, (_, i) => i);
    const messageArb = (event: number) => attemptsArb.map((attempts) => ({ event, attempts }));
    return fc
      .record({
        duplicates: fc.subarray(indices),
        late: fc.subarray(indices, { maxLength: Math.min(4, count) }),
      })
      .chain(({ duplicates, late }) =>
        fc.record({
          created: fc.constant(created ? createdId : null),
          changed: fc.constant(changed),
          snapshots: fc.constant(snapshots),
          arrivals: fc
            .tuple(...[...indices, ...duplicates].map(messageArb))
            .chain((messages) =>
              fc.shuffledSubarray(messages, { minLength: messages.length, maxLength: messages.length }),
            ),
          late: fc.tuple(...late.map(messageArb)),
          redriveKeys: fc.option(fc.array(fc.nat(), { minLength: 64, maxLength: 64 }), { freq: 2 }),
        }),
      );
  });

/** A snapshot's FieldValues beside its name: the sample's of a created contact. */
const SNAPSHOT_BASE = rowEvent('contact.created', { primaryKey: 42 }).FieldValues;

const quiet = quietObservability();
const meta = { messageId: 'm' };
let run = 0;

describe('eventCount through failures, retries and redrives (model, real store on dynalite)', () => {
  it(
    'any arrival order, crashes, lost answers, double handling, duplicates and redrives: each event counted once',
    async () => {
      await fc.assert(
        fc.asyncProperty(scenarioArb, async (scenario) => {
          const context = `CustCountProp${run++}`; // a fresh row per run
          const primaryKey = 42;
          const events: RowEvent[] = [
            ...(scenario.created === null
              ? []
              : [
                  rowEvent('contact.created', {
                    context,
                    primaryKey,
                    timestamp: at(0),
                    eventId: scenario.created,
                  }),
                ]),
            ...scenario.changed.map(({ second, eventId }) =>
              rowEvent('contact.changed', { context, primaryKey, timestamp: at(second), eventId }),
            ),
            ...scenario.snapshots.map(({ second, name }) => {
              const fieldValues = JSON.stringify({ ...SNAPSHOT_BASE, name: `name${name}` });
              const fetchedAt = new Date(at(second));
              const message = snapshotMessage({
                context,
                entity: 'contact',
                primaryKey,
                fetchedAt,
                fieldValues,
              });
              return validEvent(JSON.parse(String(message.body))) as RowEvent;
            }),
          ];
          const live = new Set(events.filter((e) => e.Event !== 'contact.reconciled').map((e) => e.EventId));

          /** Events some row write merged: the row's count lies between these and those recorded. */
          const merged = new Set<string>();

          /**
           * One handler's processing of `event` with `fault`; true when it returned (or when the second
           * handler of the same message, `concurrent`, did: it deleted the message).
           */
          const handle = async (
            event: RowEvent,
            fault: Fault,
            twice?: { at: 'record' | 'save'; run: () => Promise<boolean> },
          ): Promise<boolean> => {
            let concurrent: Promise<boolean> | undefined;
            const overtaken = async (where: 'record' | 'save') => {
              if (twice?.at === where && concurrent === undefined) {
                concurrent = twice.run();
                await concurrent;
              }
            };
            let saves = 0;
            /** A row write merged `event`: a live event always counts, a snapshot only once recorded. */
            const counted = async () => {
              const snapshot = event.Event === 'contact.reconciled';
              if (
                !snapshot ||
                (await db.store.getRowEvent(context, 'contact', primaryKey, eventSeq(event)))
              ) {
                merged.add(event.EventId);
              }
            };
            const faulty: Store = {
              ...db.store,
              async recordEvent(record) {
                await overtaken('record');
                const landed = await db.store.recordEvent(record);
                return fault.lostAnswer ? false : landed;
              },
              async saveRow(row, version) {
                if (saves++ > 0) {
                  await db.store.saveRow(row, version);
                  await counted();
                  return;
                }
                await overtaken('save');
                if (fault.crash === 'before') throw new Error('throttled');
                await db.store.saveRow(row, version);
                await counted();
                if (fault.crash === 'after') throw new Error('timed out after the row write');
              },
            };
            const deps: RowWorkerDeps = { store: faulty, hooks: {}, ignoreAssociateIds: new Set(), ...quiet };
            let ok: boolean;
            try {
              await processRowEvent(deps, event, meta);
              ok = true;
            } catch {
              ok = false;
            }
            return ok || (concurrent !== undefined && (await concurrent));
          };

          const countWithinBounds = async () => {
            const recorded = (await db.store.listRowEvents(context, 'contact', primaryKey)).filter(
              (r) => r.resendOf === undefined && r.conflictOf === undefined,
            );
            const count = (await db.store.getRow(context, 'contact', primaryKey))?.eventCount ?? 0;
            expect(count).toBeGreaterThanOrEqual(merged.size);
            expect(count).toBeLessThanOrEqual(recorded.length);
          };

          const clean: Attempt = { crash: 'none', lostAnswer: false, twice: null };
          const receives = new Map<Message, number>();
          /** The FIFO group: each message received until it succeeds or is dead-lettered, then the next. */
          const drain = async (messages: Message[], dlq: Message[]) => {
            const deleted = new Set<Message>(); // by a second handler that went on through its batch
            for (const [index, message] of messages.entries()) {
              if (deleted.has(message)) continue;
              let done = false;
              for (let receive = 0; receive < MAX_RECEIVES && !done; receive++) {
                const n = receives.get(message) ?? 0;
                receives.set(message, n + 1);
                const attempt = message.attempts[n] ?? clean;
                const { twice } = attempt;
                done = await handle(
                  events[message.event]!,
                  attempt,
                  twice === null
                    ? undefined
                    : {
                        at: twice.at,
                        run: async () => {
                          if (!(await handle(events[message.event]!, twice))) return false;
                          for (const following of messages.slice(index + 1, index + 1 + twice.next)) {
                            if (deleted.has(following) || !(await handle(events[following.event]!, clean)))
                              break;
                            deleted.add(following);
                          }
                          return true;
                        },
                      },
                );
              }
              if (!done) dlq.push(message);
              await countWithinBounds();
            }
          };
          const redrive = async (dlq: Message[]) => {
            while (dlq.length > 0) {
              const keys = scenario.redriveKeys;
              const order = dlq.map((message, i) => ({
                message,
                key: keys === null ? i : keys[i % keys.length]!,
              }));
              order.sort((a, b) => a.key - b.key);
              dlq.length = 0;
              await drain(
                order.map(({ message }) => message),
                dlq,
              );
            }
          };

          const dlq: Message[] = [];
          await drain(scenario.arrivals, dlq);
          await redrive(dlq);
          await drain(scenario.late, dlq);
          await redrive(dlq);

          const history = await db.store.listRowEvents(context, 'contact', primaryKey);
          const distinct = history.filter((r) => r.resendOf === undefined && r.conflictOf === undefined);
          // Every live event once; a snapshot once when it changed the row, else not at all.
          const recorded = new Set(history.map((r) => r.eventId));
          expect(history.map((r) => r.eventId)).toEqual(
            inOrder(events)
              .filter((e) => live.has(e.EventId) || recorded.has(e.EventId))
              .map((e) => e.EventId),
          );
          const row = await db.store.getRow(context, 'contact', primaryKey);
          expect(row).toBeDefined();
          expect(row!.eventCount).toBe(distinct.length);
          const newest = inOrder(events.filter((e) => recorded.has(e.EventId))).at(-1)!;
          expect(row!.lastEventId).toBe(newest.EventId);
          expect(row!.lastSeq).toBe(eventSeq(newest));
        }),
        { numRuns: RUNS, ...(SEED !== undefined && { seed: SEED }) },
      );
    },
    TIMEOUT,
  );
});
