import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { familyOf, parseDeliveryEvent } from '../../lib/events/index.js';
import { handleDelivery } from '../../lib/ingest/index.js';
import { replayDecision } from '../../lib/ingest/replay.js';
import { routeEvent } from '../../lib/ingest/routing.js';
import { eventSeq } from '../../lib/model/order-key.js';
import { type FetchedRow, SnapshotError, snapshotMessage } from '../../lib/reconcile/run/snapshot-message.js';
import { buildSampleBody } from '../../tools/samples.js';
import { policy, RecordingQueue, request } from '../support/delivery.js';
import { at, rowEvent } from '../support/workers.js';

const fetchedAt = new Date('2025-05-14T12:00:10.000Z');
const row = (over: Partial<FetchedRow> = {}): FetchedRow =>
  ({
    context: 'Cust1',
    entity: 'contact',
    primaryKey: 42,
    fetchedAt,
    fieldValues: '{"name":"Acme"}',
    ...over,
  }) as FetchedRow;

describe('snapshotMessage: the SQS message of a snapshot', () => {
  it('goes to the queue and FIFO group of the row’s live events, whatever the entity', () => {
    const cases = [
      ['contact', 'contact.changed'],
      ['activity', 'activity.changed'],
      ['sale', 'sale.changed'],
      ['y_equipment', 'y_equipment.changed'],
      ['list.category', 'list.category.changed'],
    ] as const;
    for (const [entity, live] of cases) {
      const message = snapshotMessage(row({ entity, context: 'Cust 1 odd', primaryKey: 7 }));
      const event = parseDeliveryEvent(buildSampleBody(live, { context: 'Cust 1 odd', primaryKey: 7 }));
      if (!event.ok) throw new Error(event.detail);
      const { queue, groupId } = routeEvent(event.event);
      expect({ entity, queue: message.queue, groupId: message.groupId }).toEqual({ entity, queue, groupId });
      expect(familyOf(`${entity}.reconciled`)).toMatchObject({
        entity,
        effect: 'reconciled',
        synthetic: true,
      });
    }
  });

  it('is one event per row, F and content: the same fetch twice has the same EventId (its deduplication id)', () => {
    const first = snapshotMessage(row());
    expect(snapshotMessage(row())).toEqual(first);
    expect(first.deduplicationId).toBe(JSON.parse(String(first.body)).EventId);
    const others = [
      row({ fieldValues: '{"name":"Acme AS"}' }),
      row({ fetchedAt: new Date(fetchedAt.getTime() + 1000) }),
      row({ primaryKey: 43 }),
      row({ context: 'Cust2' }),
      row({ fieldValues: undefined, deleted: true }),
    ].map((other) => snapshotMessage(other).deduplicationId);
    expect(new Set([first.deduplicationId, ...others]).size).toBe(6);
  });

  it('keeps the CRM’s text of FieldValues, digits and all, and is ordered at F before a live event of the same Timestamp', () => {
    const message = snapshotMessage(row({ fieldValues: '{"big":12345678901234567890,"n":1.50}' }));
    const body = String(message.body);
    expect(body).toContain('"FieldValues":{"big":12345678901234567890,"n":1.50}');
    const snapshot = JSON.parse(body);
    expect(snapshot).toMatchObject({
      Event: 'contact.reconciled',
      Timestamp: '2025-05-14T12:00:10.000Z',
      Changes: [],
    });
    const live = rowEvent('contact.changed', { context: 'Cust1', primaryKey: 42, timestamp: at(10) });
    expect(eventSeq(snapshot) < eventSeq(live)).toBe(true);
    expect(eventSeq(snapshot) > eventSeq(rowEvent('contact.changed', { timestamp: at(9.999) }))).toBe(true);
  });

  it('refuses, with one line naming the row, what the workers would refuse or the store cannot hold', () => {
    expect(() => snapshotMessage(row({ fieldValues: '[1]' }))).toThrow(
      new SnapshotError(row(), 'fieldValues must be the text of a JSON object'),
    );
    expect(() => snapshotMessage(row({ fieldValues: '{"a":' }))).toThrow(SnapshotError);
    expect(() => snapshotMessage(row({ entity: 'webhook' }))).toThrow(/unknown-event/);
    expect(() => snapshotMessage(row({ entity: 'nosuchentity' }))).toThrow(
      /snapshot of Cust1\/nosuchentity\/42 not queued/,
    );
    const huge = `{"text":"${randomBytes(400_000).toString('hex')}"}`; // does not deflate
    expect(() => snapshotMessage(row({ fieldValues: huge }))).toThrow(/over .* bytes/);
  });

  it('the schema holds a snapshot to its shape: FieldValues or Deleted, no Changes, the receiver as associate', () => {
    const body = JSON.parse(String(snapshotMessage(row()).body));
    const broken = [
      { ...body, Changes: ['name'] },
      { ...body, ChangedByAssociateId: 5 },
      { ...body, Deleted: true },
      { ...body, FieldValues: undefined },
      { ...body, Values: { a: 1 } },
      { ...body, Entity: 'activity' },
    ];
    for (const candidate of broken)
      expect(parseDeliveryEvent(candidate)).toMatchObject({ ok: false, reason: 'invalid-event' });
    expect(parseDeliveryEvent(body)).toMatchObject({ ok: true });
  });
});

describe('the ingest and <entity>.reconciled', () => {
  it('refuses (400) a snapshot posted over HTTP, even signed with the right secret, and queues nothing', async () => {
    const queue = new RecordingQueue();
    for (const entity of ['contact', 'sale', 'y_equipment']) {
      const body = JSON.parse(String(snapshotMessage(row({ entity, fetchedAt: new Date() })).body));
      // Valid, and invalid (an authentic invalid body is otherwise parked): refused all the same.
      for (const posted of [body, { ...body, Changes: ['name'], ChangedByAssociateId: 5 }]) {
        const response = await handleDelivery(request(posted), policy(), queue);

        expect(response.status).toBe(400);
        expect(response.decision).toMatchObject({ kind: 'reject', reason: 'synthetic-event' });
      }
    }
    expect(queue.sent).toHaveLength(0);
  });

  it('keeps a parked one parked on replay (an authentic one was parked as unknown-event before this family existed)', () => {
    const body = String(snapshotMessage(row({ fetchedAt: new Date() })).body);
    const parked = {
      messageId: 'parked-1',
      body,
      groupId: 'Cust1:contact:42',
      attributes: {
        event: 'contact.reconciled',
        eventId: JSON.parse(body).EventId,
        signatureVerified: 'true',
        receivedAt: new Date().toISOString(),
        reason: 'unknown-event',
      },
    };

    const outcome = replayDecision(parked, policy(), new Date());

    expect(outcome).toMatchObject({ kind: 'keep', reason: 'synthetic-event', message: { queue: 'parked' } });
  });
});
