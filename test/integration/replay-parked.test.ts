import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleDelivery, replayParked } from '../../lib/ingest/index.js';
import { buildSampleBody } from '../../tools/samples.js';
import { policy, request, withRawBody } from '../support/delivery.js';
import { type ParkedQueues, startParkedQueues } from '../support/parked.js';

/** The replay of the parked queue against the SQS emulator: what routes now leaves, the rest stays with today's reason. */
let queues: ParkedQueues;

beforeAll(async () => {
  queues = await startParkedQueues();
});
afterAll(async () => queues.local.close());

describe('replayParked', () => {
  it('sends what routes today (deduplicated by EventId, receivedAt kept), re-parks the rest with its reason', async () => {
    const queue = queues.sender();
    const onlyContacts = policy({ entities: (entity) => entity === 'contact' });
    const receivedAt = new Date(Date.now() - 3_600_000);
    const person = buildSampleBody('person.created', { context: 'CustR', primaryKey: 7 });
    const unknown = { ...buildSampleBody('contact.changed'), Event: 'invoice.created', Entity: 'invoice' };
    const { ContextIdentifier: _, ...contextless } = buildSampleBody('sale.sold');
    for (const body of [person, unknown, contextless]) {
      const answer = await handleDelivery(request(body, { receivedAt }), onlyContacts, queue);
      expect(answer.decision.kind).toBe('park');
    }
    // Bytes that are not UTF-8 travel base64-encoded and come back as the same bytes.
    const binary = withRawBody(request(person, { receivedAt }), Buffer.from([0xff, 0xfe, 0x7b]));
    expect((await handleDelivery(binary, onlyContacts, queue)).decision.kind).toBe('park');

    const replayedAt = new Date();
    const source = queues.source();
    const report = await replayParked({ source, sender: queue, policy: policy(), now: () => replayedAt });

    expect(report).toEqual({
      replayed: 1,
      kept: 3,
      keptBy: { 'unknown-event': 1, 'invalid-event': 1, 'invalid-utf8': 1 },
      complete: true,
    });
    const [replayed, ...more] = queues.peek('entities');
    expect(more).toHaveLength(0);
    expect(JSON.parse(replayed?.body ?? '{}')).toEqual(person);
    expect(replayed?.attributes).toMatchObject({
      MessageGroupId: 'CustR:person:7',
      MessageDeduplicationId: person.EventId,
    });
    const attributes = replayed?.values;
    expect(attributes).toMatchObject({
      event: 'person.created',
      eventId: person.EventId,
      signatureVerified: 'true',
      receivedAt: receivedAt.toISOString(),
      replayedAt: replayedAt.toISOString(),
    });
    expect(attributes).not.toHaveProperty('reason');

    const parked = queues.peek('parked');
    expect(parked.map((message) => message.values.reason).sort()).toEqual([
      'invalid-event',
      'invalid-utf8',
      'unknown-event',
    ]);
    for (const message of parked) {
      expect(message.values).toMatchObject({
        replayedAt: replayedAt.toISOString(),
        receivedAt: receivedAt.toISOString(),
      });
    }
    const binaryCopy = parked.find((message) => message.values.reason === 'invalid-utf8');
    expect(binaryCopy?.values.bodyEncoding).toBe('base64');
    expect(Buffer.from(binaryCopy?.body ?? '', 'base64')).toEqual(Buffer.from([0xff, 0xfe, 0x7b]));
  });

  it('a second run replays nothing more, keeps the rest, and --event / --max limit what it looks at', async () => {
    const queue = queues.sender();
    const source = queues.source();
    expect(
      await replayParked({ source, sender: queue, policy: policy(), eventPattern: 'invoice.*' }),
    ).toEqual({
      replayed: 0,
      kept: 1,
      keptBy: { 'unknown-event': 1 },
      complete: true,
    });
    expect(await replayParked({ source, sender: queue, policy: policy(), max: 2 })).toMatchObject({
      kept: 2,
    });
    expect(await replayParked({ source, sender: queue, policy: policy() })).toMatchObject({
      replayed: 0,
      kept: 3,
    });
    expect(queues.peek('parked')).toHaveLength(3);
    expect(queues.peek('entities')).toHaveLength(1); // the one of the first run
  });
});
