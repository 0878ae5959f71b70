import { EventBridgeClient, PutEventsCommand, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { type BusEntry, MAX_ENTRY_BYTES, SOURCE } from '../../lib/bus/entry.js';
import { createEventBridgePublisher } from '../../lib/bus/publisher.js';

const eventBridge = mockClient(EventBridgeClient);
afterEach(() => eventBridge.reset());

const entry = (i: number, detailBytes = 20): BusEntry => ({
  Source: SOURCE,
  DetailType: 'contact.changed',
  Detail: JSON.stringify({ i, pad: 'x'.repeat(Math.max(0, detailBytes - 20)) }),
});
const publisher = () =>
  createEventBridgePublisher({ client: new EventBridgeClient({}), eventBusName: 'bus' });
/** PutEvents answering every entry with an id derived from its detail. */
const accept = (entries: PutEventsRequestEntry[] = []) => ({
  FailedEntryCount: 0,
  Entries: entries.map((e) => ({ EventId: `id-${JSON.parse(e.Detail ?? '{}').i}` })),
});

describe('EventBridge publisher', () => {
  it('sends PutEvents calls of at most 10 entries, in order, on the configured bus', async () => {
    eventBridge.on(PutEventsCommand).callsFake((input) => accept(input.Entries));
    const entries = Array.from({ length: 23 }, (_, i) => entry(i));

    const results = await publisher().publish(entries);

    const calls = eventBridge.commandCalls(PutEventsCommand).map((call) => call.args[0].input.Entries ?? []);
    expect(calls.map((c) => c.length)).toEqual([10, 10, 3]);
    expect(calls.flat()).toEqual(entries.map((e) => ({ ...e, EventBusName: 'bus' })));
    expect(results).toEqual(entries.map((_, i) => ({ ok: true, eventId: `id-${i}` })));
  });

  it('keeps each call within 256 KB of entries', async () => {
    eventBridge.on(PutEventsCommand).callsFake((input) => accept(input.Entries));
    const callSizes = () =>
      eventBridge.commandCalls(PutEventsCommand).map((call) => call.args[0].input.Entries?.length);

    await publisher().publish(Array.from({ length: 5 }, (_, i) => entry(i, 100 * 1024)));
    expect(callSizes()).toEqual([2, 2, 1]);

    eventBridge.resetHistory();
    await publisher().publish([entry(0, MAX_ENTRY_BYTES - 40), entry(1)]);
    expect(callSizes()).toEqual([1, 1]);
  });

  it('fails only the entries PutEvents reports failed (FailedEntryCount, ErrorCode)', async () => {
    eventBridge.on(PutEventsCommand).resolves({
      FailedEntryCount: 1,
      Entries: [
        { EventId: 'a' },
        { ErrorCode: 'InternalFailure', ErrorMessage: 'try again' },
        { EventId: 'c' },
      ],
    });

    const results = await publisher().publish([entry(0), entry(1), entry(2)]);

    expect(results).toEqual([
      { ok: true, eventId: 'a' },
      { ok: false, errorCode: 'InternalFailure', errorMessage: 'try again' },
      { ok: true, eventId: 'c' },
    ]);
  });

  it('fails every entry of a call that throws, and only those', async () => {
    const throttled = Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
    eventBridge
      .on(PutEventsCommand)
      .rejectsOnce(throttled)
      .callsFake((input) => accept(input.Entries));

    const results = await publisher().publish(Array.from({ length: 12 }, (_, i) => entry(i)));

    expect(results.slice(0, 10)).toEqual(
      Array(10).fill({ ok: false, errorCode: 'ThrottlingException', errorMessage: 'Rate exceeded' }),
    );
    expect(results.slice(10)).toEqual([
      { ok: true, eventId: 'id-10' },
      { ok: true, eventId: 'id-11' },
    ]);
  });

  it('fails an entry PutEvents gave no result for', async () => {
    eventBridge.on(PutEventsCommand).resolves({ FailedEntryCount: 0, Entries: [{ EventId: 'a' }] });
    const [, second] = await publisher().publish([entry(0), entry(1)]);
    expect(second).toMatchObject({ ok: false, errorCode: 'MissingResult' });
  });

  it('makes no call for no entries', async () => {
    expect(await publisher().publish([])).toEqual([]);
    expect(eventBridge.commandCalls(PutEventsCommand)).toHaveLength(0);
  });
});
