import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ReplayFilter, replayParked } from '../../lib/ingest/index.js';
import { createSqsParkedSource } from '../../lib/queue/sqs-parked.js';
import { buildSampleBody } from '../../tools/samples.js';
import { policy } from '../support/delivery.js';
import { type ParkedQueues, type PeekedMessage, startParkedQueues } from '../support/parked.js';

/**
 * What a replay does not decide stays as it was: filtered out or over `max`, a parked delivery may be
 * received all the same (SQS cannot filter), and without care each such receive counts toward the
 * parked queue's maxReceiveCount (5), after which SQS moves it to the parked DLQ.
 */
let queues: ParkedQueues;

beforeEach(async () => {
  queues = await startParkedQueues();
});
afterEach(async () => queues.local.close());

/** ENTITIES=contact still: whatever a run decides is parked again. */
const onlyContacts = policy({ entities: (entity) => entity === 'contact' });

/** Runs the replay `times` times with `filter`; the number each run decided. */
async function replayTimes(times: number, filter: ReplayFilter): Promise<number[]> {
  const decided: number[] = [];
  for (let run = 0; run < times; run++) {
    const report = await replayParked({
      source: queues.source(),
      sender: queues.sender(),
      policy: onlyContacts,
      ...filter,
    });
    decided.push(report.replayed + report.kept);
  }
  return decided;
}

/**
 * The parked queue's and its DLQ's messages among `eventIds`, by EventId, once the emulator's timers
 * made the released ones visible again (or moved them to the DLQ).
 */
async function where(
  eventIds: string[],
): Promise<{ parked: Map<string, PeekedMessage>; dlq: PeekedMessage[] }> {
  await expect.poll(() => queues.peek('parked').filter((message) => message.inFlight)).toEqual([]);
  const ours = (message: PeekedMessage) => eventIds.includes(message.values.eventId ?? '');
  return {
    parked: new Map(
      queues
        .peek('parked')
        .filter(ours)
        .map((message) => [message.values.eventId!, message]),
    ),
    dlq: queues.peek('parked', { dlq: true }).filter(ours),
  };
}

/** Each message a run did not decide is the same delivery: body, group and attributes (reason, times). */
function expectUnchanged(before: Map<string, PeekedMessage>, after: Map<string, PeekedMessage>): number {
  let unchanged = 0;
  for (const [eventId, message] of after) {
    expect(Number(message.attributes.ApproximateReceiveCount)).toBeLessThanOrEqual(1);
    if (message.values.replayedAt !== undefined) continue;
    const original = before.get(eventId)!;
    expect([message.body, message.attributes.MessageGroupId, message.values]).toEqual([
      original.body,
      original.attributes.MessageGroupId,
      original.values,
    ]);
    unchanged++;
  }
  return unchanged;
}

describe('a filtered or bounded replay', () => {
  it('event=sale.* six times: the persons stay parked as they were, none dead-lettered', async () => {
    const persons = await queues.park(
      [1, 2, 3, 4, 5].map((key) => buildSampleBody('person.created', { context: 'CustF', primaryKey: key })),
    );
    const sale = await queues.park([buildSampleBody('sale.created', { context: 'CustF', primaryKey: 9 })]);
    const before = (await where([...persons, ...sale])).parked;

    expect(await replayTimes(6, { eventPattern: 'sale.*' })).toEqual([1, 1, 1, 1, 1, 1]);

    const after = await where([...persons, ...sale]);
    expect(after.dlq).toEqual([]);
    expect([...after.parked.keys()].sort()).toEqual([...persons, ...sale].sort());
    expect(expectUnchanged(before, after.parked)).toBe(5);
  });

  it('max=1 six times over eight: the two never decided stay as they were, none dead-lettered', async () => {
    const persons = await queues.park(
      [1, 2, 3, 4, 5, 6, 7, 8].map((key) =>
        buildSampleBody('person.created', { context: 'CustM', primaryKey: key }),
      ),
    );
    const before = (await where(persons)).parked;

    expect(await replayTimes(6, { max: 1 })).toEqual([1, 1, 1, 1, 1, 1]);

    const after = await where(persons);
    expect(after.dlq).toEqual([]);
    expect([...after.parked.keys()].sort()).toEqual([...persons].sort());
    expect(expectUnchanged(before, after.parked)).toBe(2);
  });
});

describe('a long replay', () => {
  it('stops at half the time a received message stays hidden, so its held copies never spend a receive', async () => {
    // 41 deliveries in 41 groups; messages hidden for 1 s; each receive takes 400 ms: a run of all of
    // them would outlast the hiding, receive its own copies again and again, and dead-letter them.
    const persons = await queues.park(
      Array.from({ length: 41 }, (_, i) =>
        buildSampleBody('person.created', { context: `CustLong${i}`, primaryKey: i + 1 }),
      ),
    );
    const parked = createSqsParkedSource({
      client: queues.local.client,
      queueUrl: queues.queueUrls.parked,
      visibilityTimeout: 1,
    });
    const source = {
      ...parked,
      receive: async (max: number) => {
        await new Promise((resolve) => setTimeout(resolve, 400));
        return parked.receive(max);
      },
    };
    const run = () => replayParked({ source, sender: queues.sender(), policy: onlyContacts });

    const first = await run();

    const afterFirst = await where(persons);
    expect(afterFirst.dlq).toEqual([]);
    expect(afterFirst.parked.size).toBe(41);
    expect(first.complete).toBe(false);
    expect(first.kept).toBeLessThan(41);
    // Later runs go on where it stopped: every delivery is decided, none dead-lettered.
    for (let runs = 1; runs < 8; runs++) {
      const { parked: now } = await where(persons);
      if ([...now.values()].every((message) => message.values.replayedAt !== undefined)) break;
      await run();
    }
    const after = await where(persons);
    expect(after.dlq).toEqual([]);
    expect([...after.parked.values()].filter((message) => message.values.replayedAt === undefined)).toEqual(
      [],
    );
    expect(expectUnchanged(afterFirst.parked, after.parked)).toBe(0);
  }, 60_000);
});
