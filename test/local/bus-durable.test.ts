import { afterEach, describe, expect, it, vi } from 'vitest';
import type { BusEntry } from '../../lib/bus/entry.js';
import { parseSubscriptions, type Subscription } from '../../lib/bus/subscriptions.js';
import { startLocalBus } from '../../local/bus/local-bus.js';
import type { LocalBus, LocalBusOptions } from '../../local/bus/types.js';
import { removeJournals, type StatusTarget, statusTarget, tempJournal } from '../support/bus.js';

/**
 * What the local bus accepted is not lost and not repeated: its deliveries outlive a stop (the
 * kill -9 case is test/e2e/bus-crash.test.ts), and an entry it cannot take fails alone.
 */
const targets: StatusTarget[] = [];
const buses: LocalBus[] = [];
afterEach(async () => {
  await Promise.all(buses.splice(0).map((bus) => bus.close()));
  await Promise.all(targets.splice(0).map((started) => started.close()));
  removeJournals();
});

async function target(...statuses: number[]): Promise<StatusTarget> {
  const started = await statusTarget(...statuses);
  targets.push(started);
  return started;
}

async function bus(subscriptions: Subscription[], options: Partial<LocalBusOptions> = {}) {
  const started = await startLocalBus({
    subscriptions,
    journalPath: tempJournal(),
    backoff: { baseMs: 5, maxMs: 20 },
    ...options,
  });
  buses.push(started);
  return started;
}

const subscriptions = (yaml: string) => parseSubscriptions(yaml, 'subscriptions.yml', 'local');

const entry = (eventId: string, extra = ''): BusEntry => ({
  Source: 'crm-webhook-receiver',
  DetailType: 'contact.changed',
  Detail: `{"EventId":"${eventId}"${extra}}`,
});

/** The EventIds a target received, in order. */
const eventIds = ({ received }: StatusTarget) =>
  received.map((request) => JSON.parse(request.body).detail.EventId as string);

describe('the local bus keeps what it accepted', () => {
  it('delivers after the next start what was waiting for a retry at a stop, and keeps its dead letters', async () => {
    // Arrange: `flaky` fails once, then waits a minute for its retry; `refused` answers 400 (no retry).
    const flaky = await target(500, 200);
    const refused = await target(400);
    const file = subscriptions(
      `- { name: flaky, pattern: { source: [crm-webhook-receiver] }, target: { url: "${flaky.url}" } }
- { name: refused, pattern: { source: [crm-webhook-receiver] }, target: { url: "${refused.url}" } }
`,
    );
    const journalPath = tempJournal();
    const first = await bus(file, { journalPath, backoff: { baseMs: 60_000, maxMs: 60_000 } });
    expect(await first.publish([entry('e-1')])).toMatchObject([{ ok: true }]);
    await vi.waitFor(
      () => {
        expect(flaky.received).toHaveLength(1);
        expect(first.view()[1]?.dlq).toHaveLength(1);
      },
      { timeout: 10_000, interval: 5 },
    );

    // Act: stop while the retry waits, start again on the same journal.
    await first.close();
    const second = await bus(file, { journalPath });
    await second.idle();

    // Assert: the retry happened after the restart, with the attempt already made counted.
    expect(first.view()[0]).toMatchObject({ delivered: 0, inFlight: 1, dlq: [] });
    expect(second.notices).toEqual([`resumed 1 deliveries from ${journalPath}`]);
    expect(eventIds(flaky)).toEqual(['e-1', 'e-1']);
    expect(new Set(flaky.received.map((request) => JSON.parse(request.body).id)).size).toBe(1);
    const [resumed, deadLettered] = second.view();
    expect(resumed).toMatchObject({ delivered: 1, inFlight: 0, dlq: [] });
    expect(resumed?.recent[0]?.attempts).toBe(2);
    expect(deadLettered?.dlq).toEqual(first.view()[1]?.dlq);
    expect(deadLettered?.dlq[0]).toMatchObject({ eventId: 'e-1', attempts: 1, error: 'HTTP 400' });
    expect(eventIds(refused)).toEqual(['e-1']);
    expect(await first.publish([entry('e-2')])).toEqual([
      { ok: false, errorCode: 'BusClosed', errorMessage: 'the local bus is closed' },
    ]);
  });

  it('fails only the entry it cannot take, and delivers the others of the call once', async () => {
    const all = await target(200);
    const [every] = subscriptions(
      `- { name: every, pattern: { source: [crm-webhook-receiver] }, target: { url: "${all.url}" } }\n`,
    );
    // A matcher that throws on one event, as the recursive one did on 9,000 nested arrays.
    const fragile: Subscription = {
      ...every!,
      name: 'fragile',
      matches: (event) => {
        if (JSON.stringify(event).includes('e-2')) throw new RangeError('Maximum call stack size exceeded');
        return false;
      },
    };
    const local = await bus([every!, fragile]);

    const results = await local.publish([entry('e-1'), entry('e-2'), entry('e-3')]);
    await local.idle();

    expect(results.map((result) => (result.ok ? 'ok' : result.errorCode))).toEqual([
      'ok',
      'InternalFailure',
      'ok',
    ]);
    expect(results[1]).toMatchObject({ errorMessage: expect.stringContaining('Maximum call stack') });
    expect(eventIds(all)).toEqual(['e-1', 'e-3']);
  });

  it('matches and delivers an event whose FieldValues nest 9,000 arrays deep, with the rest of its call', async () => {
    const all = await target(200);
    const deep = await target(200);
    const local = await bus(
      subscriptions(
        `- { name: all, pattern: { source: [crm-webhook-receiver] }, target: { url: "${all.url}" } }
- { name: deep, pattern: { detail: { FieldValues: { x: [deep] } } }, target: { url: "${deep.url}" } }
`,
      ),
    );
    const nested = `,"FieldValues":{"x":${'['.repeat(9000)}"deep"${']'.repeat(9000)}}`;
    const entries = Array.from({ length: 10 }, (_, i) => entry(`e-${i}`, i === 4 ? nested : ''));

    const results = await local.publish(entries);
    await local.idle();

    expect(results.every((result) => result.ok)).toBe(true);
    expect(eventIds(all).sort()).toEqual(entries.map((_, i) => `e-${i}`).sort());
    expect(eventIds(deep)).toEqual(['e-4']);
  });
});
