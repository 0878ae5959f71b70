import { EventBridgeClient, ListRulesCommand, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { afterEach, describe, expect, it } from 'vitest';
import type { BusEntry } from '../../lib/bus/entry.js';
import { createEventBridgePublisher, type EventPublisher } from '../../lib/bus/publisher.js';
import { parseSubscriptions } from '../../lib/bus/subscriptions.js';
import { startLocalBus } from '../../local/bus/local-bus.js';
import type { LocalBus } from '../../local/bus/types.js';
import {
  type EventBridgeEndpoint,
  startEventBridgeEndpoint,
} from '../../local/emulators/eventbridge-endpoint.js';
import { removeJournals, statusTarget, tempJournal } from '../support/bus.js';

/** The workers' real EventBridge client against the local PutEvents endpoint. */
const BUS = 'crm-webhook-receiver-local';
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  removeJournals();
});

async function endpoint(bus: EventPublisher): Promise<EventBridgeEndpoint> {
  const started = await startEventBridgeEndpoint({ bus, busName: BUS, port: 0 });
  cleanups.push(() => started.close());
  return started;
}

/** A publisher that records what reaches it and accepts everything. */
function recorder(): EventPublisher & { received: BusEntry[] } {
  const received: BusEntry[] = [];
  return {
    received,
    publish: async (entries) => {
      received.push(...entries);
      return entries.map((_, i) => ({
        ok: true as const,
        eventId: `id-${received.length - entries.length + i}`,
      }));
    },
  };
}

function client(url: string): EventBridgeClient {
  const created = new EventBridgeClient({ endpoint: url, region: 'us-east-1', credentials, maxAttempts: 1 });
  cleanups.push(async () => created.destroy());
  return created;
}

const entry = (detail: string, type = 'contact.changed') => ({
  Source: 'crm-webhook-receiver',
  DetailType: type,
  Detail: detail,
  EventBusName: BUS,
});

describe('local EventBridge endpoint', () => {
  it('is found through AWS_ENDPOINT_URL_EVENTBRIDGE and delivers the entries to the local bus, Detail verbatim', async () => {
    const { url, received, close } = await statusTarget(200);
    cleanups.push(close);
    const bus: LocalBus = await startLocalBus({
      subscriptions: parseSubscriptions(
        `- name: sold\n  pattern: { detail-type: [sale.sold] }\n  target: { url: "${url}" }\n`,
        'subscriptions.yml',
        'local',
      ),
      journalPath: tempJournal(),
    });
    cleanups.push(() => bus.close());
    const local = await endpoint(bus);
    const saved = process.env.AWS_ENDPOINT_URL_EVENTBRIDGE;
    process.env.AWS_ENDPOINT_URL_EVENTBRIDGE = local.endpoint;
    cleanups.push(async () => {
      if (saved === undefined) delete process.env.AWS_ENDPOINT_URL_EVENTBRIDGE;
      else process.env.AWS_ENDPOINT_URL_EVENTBRIDGE = saved;
    });
    const sdk = new EventBridgeClient({ region: 'us-east-1', credentials, maxAttempts: 1 });
    cleanups.push(async () => sdk.destroy());

    const detail = '{"EventId":"e-1","FieldValues":{"big":9223372036854775807},"seq":"1"}';
    const results = await createEventBridgePublisher({ client: sdk, eventBusName: BUS }).publish([
      { Source: 'crm-webhook-receiver', DetailType: 'sale.sold', Detail: detail },
      { Source: 'crm-webhook-receiver', DetailType: 'contact.changed', Detail: '{"EventId":"e-2"}' },
    ]);
    await bus.idle();

    expect(results).toEqual([
      { ok: true, eventId: expect.stringMatching(/^[0-9a-f-]{36}$/) },
      { ok: true, eventId: expect.stringMatching(/^[0-9a-f-]{36}$/) },
    ]);
    expect(received).toHaveLength(1);
    expect(received[0]?.body).toContain(`"detail":${detail}`);
    expect(JSON.parse(received[0]!.body)).toMatchObject({ id: results[0]!.ok && results[0]!.eventId });
    expect(bus.view()[0]).toMatchObject({ matched: 1, delivered: 1 });
  });

  it('fails only the entries EventBridge would refuse, each with its code, and passes the others on', async () => {
    const bus = recorder();
    const sdk = client((await endpoint(bus)).endpoint);

    const output = await sdk.send(
      new PutEventsCommand({
        Entries: [
          entry('{"n":1}'),
          { ...entry('{"n":2}'), Detail: undefined },
          { Source: 'crm-webhook-receiver', EventBusName: BUS },
          entry('[1,2]'),
          entry('{"n":'),
          { ...entry('{"n":5}'), EventBusName: 'crm-webhook-receiver-prod' },
          { ...entry('{"n":6}'), EventBusName: undefined },
          { ...entry('{"n":7}'), EventBusName: `arn:aws:events:us-east-1:000000000000:event-bus/${BUS}` },
        ],
      }),
    );

    expect(output.FailedEntryCount).toBe(6);
    expect(output.Entries).toEqual([
      { EventId: 'id-0' },
      {
        ErrorCode: 'InvalidArgument',
        ErrorMessage: 'Parameter(s) Detail could not be found for this event.',
      },
      {
        ErrorCode: 'InvalidArgument',
        ErrorMessage: 'Parameter(s) DetailType, Detail could not be found for this event.',
      },
      { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is malformed.' },
      { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is malformed.' },
      {
        ErrorCode: 'InvalidArgument',
        ErrorMessage: `Event bus crm-webhook-receiver-prod does not exist: the local runtime has the bus ${BUS}.`,
      },
      {
        ErrorCode: 'InvalidArgument',
        ErrorMessage: `Event bus default does not exist: the local runtime has the bus ${BUS}.`,
      },
      { EventId: 'id-1' },
    ]);
    expect(bus.received.map((received) => received.Detail)).toEqual(['{"n":1}', '{"n":7}']);
  });

  it('refuses alone a Detail nested deeper than 1100 levels, as EventBridge documents; the rest of the call is delivered once', async () => {
    const hook = await statusTarget(200);
    cleanups.push(hook.close);
    const bus = await startLocalBus({
      subscriptions: parseSubscriptions(
        `- { name: all, pattern: { source: [crm-webhook-receiver] }, target: { url: "${hook.url}" } }\n`,
        'subscriptions.yml',
        'local',
      ),
      journalPath: tempJournal(),
    });
    cleanups.push(() => bus.close());
    const sdk = client((await endpoint(bus)).endpoint);
    /** A Detail `levels` deep: the object, FieldValues, then arrays. */
    const nested = (levels: number) =>
      `{"EventId":"deep-${levels}","FieldValues":{"x":${'['.repeat(levels - 2)}1${']'.repeat(levels - 2)}}}`;
    const details = ['{"EventId":"e-0"}', nested(9000), nested(1100)];
    for (let i = 1; i <= 7; i++) details.push(`{"EventId":"e-${i}"}`);

    const results = await createEventBridgePublisher({ client: sdk, eventBusName: BUS }).publish(
      details.map((Detail) => ({ Source: 'crm-webhook-receiver', DetailType: 'contact.changed', Detail })),
    );
    await bus.idle();

    expect(
      results.map((result) => (result.ok ? 'ok' : `${result.errorCode}: ${result.errorMessage}`)),
    ).toEqual([
      'ok',
      'MalformedDetail: Detail nests 9000 levels deep; PutEvents processes nested JSON up to 1100 levels.',
      ...Array.from({ length: 8 }, () => 'ok'),
    ]);
    const delivered = hook.received.map((request) => JSON.parse(request.body).detail.EventId as string);
    expect(delivered.sort()).toEqual(['deep-1100', 'e-0', 'e-1', 'e-2', 'e-3', 'e-4', 'e-5', 'e-6', 'e-7']);
  });

  it("answers the bus's own per-entry failures, so the publisher fails only those records", async () => {
    const bus = await startLocalBus({ subscriptions: [], journalPath: tempJournal() });
    await bus.close();
    const sdk = client((await endpoint(bus)).endpoint);

    const results = await createEventBridgePublisher({ client: sdk, eventBusName: BUS }).publish([
      { Source: 'crm-webhook-receiver', DetailType: 'sale.sold', Detail: '{}' },
    ]);

    expect(results).toEqual([{ ok: false, errorCode: 'BusClosed', errorMessage: 'the local bus is closed' }]);
  });

  it('refuses a whole call as EventBridge does: no entries, more than 10, over 256 KB in all, another operation', async () => {
    const bus = recorder();
    const sdk = client((await endpoint(bus)).endpoint);
    const put = (count: number, detail = '{}') =>
      sdk.send(new PutEventsCommand({ Entries: Array.from({ length: count }, () => entry(detail)) }));

    await expect(put(0)).rejects.toMatchObject({
      name: 'ValidationException',
      message: expect.stringContaining("'entries' failed to satisfy constraint"),
      $metadata: { httpStatusCode: 400 },
    });
    await expect(put(11)).rejects.toMatchObject({ name: 'ValidationException' });
    await expect(put(2, JSON.stringify({ text: 'x'.repeat(140 * 1024) }))).rejects.toMatchObject({
      name: 'ValidationException',
      message: 'Total size of the entries in the request is over the limit.',
    });
    await expect(sdk.send(new ListRulesCommand({}))).rejects.toMatchObject({
      name: 'UnknownOperationException',
      message: 'AWSEvents.ListRules: the local EventBridge serves AWSEvents.PutEvents only',
    });
    expect(bus.received).toEqual([]);
  });
});
