import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { replayParked } from '../../lib/ingest/index.js';
import { type QueueKey, type QueueSender, QueueUnavailableError } from '../../lib/queue/port.js';
import { buildSampleBody } from '../../tools/samples.js';
import { policy } from '../support/delivery.js';
import { type ParkedQueues, startParkedQueues } from '../support/parked.js';

/**
 * Replays side by side against the SQS emulator (FIFO groups, 5-minute deduplication as SQS does
 * them): whatever runs beside a replay, each parked delivery ends on its queue or still parked, once.
 */
let queues: ParkedQueues;

beforeEach(async () => {
  queues = await startParkedQueues();
});
afterEach(async () => queues.local.close());

function eventIds(key: QueueKey, dlq = false): string[] {
  return queues
    .peek(key, { dlq })
    .map((message) => message.values.eventId ?? '')
    .sort();
}

describe('replays at the same time', () => {
  it.each([2, 3])(
    '%i replays over 200 parked: each delivery replayed once or still parked once',
    async (runs) => {
      const keys = Array.from({ length: 100 }, (_, index) => index + 1);
      const persons = await queues.park(
        keys.map((key) => buildSampleBody('person.created', { context: 'CustC', primaryKey: key })),
      );
      const sales = await queues.park(
        keys.map((key) => buildSampleBody('sale.created', { context: 'CustC', primaryKey: key })),
      );
      // Persons route now; sales still do not (entity-not-enabled): they go round the parked queue.
      const personsToo = policy({ entities: (entity) => entity === 'contact' || entity === 'person' });

      const reports = await Promise.all(
        Array.from({ length: runs }, () =>
          replayParked({ source: queues.source(), sender: queues.sender(), policy: personsToo }),
        ),
      );

      expect(eventIds('entities')).toEqual(persons.sort());
      expect(eventIds('parked')).toEqual(sales.sort());
      expect(eventIds('parked', true)).toEqual([]);
      expect(reports.reduce((sum, report) => sum + report.replayed, 0)).toBe(100);
    },
  );

  it('a replay that fails half-way removes nothing whose successor was not queued, and hands back what it held', async () => {
    const keys = Array.from({ length: 30 }, (_, index) => index + 1);
    const persons = await queues.park(
      keys.map((key) => buildSampleBody('person.created', { context: 'CustH', primaryKey: key })),
    );
    const sales = await queues.park(
      keys.map((key) => buildSampleBody('sale.created', { context: 'CustH', primaryKey: key })),
    );
    const personsToo = policy({ entities: (entity) => entity === 'contact' || entity === 'person' });
    let sends = 0;
    const failing: QueueSender = {
      async send(message) {
        if (++sends === 25) throw new QueueUnavailableError('injected', message.queue);
        await queues.sender().send(message);
      },
    };

    await expect(
      replayParked({ source: queues.source(), sender: failing, policy: personsToo }),
    ).rejects.toThrow('injected');
    await expect.poll(() => queues.peek('parked').filter((message) => message.inFlight)).toEqual([]);
    const replayedSoFar = eventIds('entities');
    expect(replayedSoFar.length).toBeGreaterThan(0);
    // Each delivery once: replayed, or still parked (the one whose send failed among them).
    expect([...replayedSoFar, ...eventIds('parked')].sort()).toEqual([...persons, ...sales].sort());

    await replayParked({ source: queues.source(), sender: queues.sender(), policy: personsToo });
    expect(eventIds('entities')).toEqual(persons.sort());
    expect(eventIds('parked')).toEqual(sales.sort());
  });
});
