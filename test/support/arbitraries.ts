import fc from 'fast-check';
import type { RowEvent, WebhookStateEvent } from '../../lib/events/index.js';
import { eventSeq } from '../../lib/model/order-key.js';
import { rowEvent, stateEvent } from './workers.js';

const CONTACT_EVENTS = [
  'contact.created',
  'contact.changed',
  'contact.softdeleted',
  'contact.deleted',
] as const;
/** Field names of the spec, and names that are also members of every JavaScript object. */
const FIELDS = [
  'name',
  'department',
  'associate_id',
  'updated',
  'deleted',
  'DeletedDate',
  'number1',
  'constructor',
  'toString',
  '__proto__',
  'hasOwnProperty',
];

/** A Timestamp from a small range (so ties happen), written with 1 to 7 fraction digits. */
const timestampArb = fc
  .record({
    second: fc.integer({ min: 0, max: 9 }),
    tenths: fc.integer({ min: 0, max: 2 }),
    digits: fc.integer({ min: 1, max: 7 }),
  })
  .map(({ second, tenths, digits }) => `2025-05-14T12:00:0${second}.${String(tenths).padEnd(digits, '0')}Z`);

/**
 * Distinct events of one contact row, in no particular order: distinct by EventId and by content (two
 * bodies equal but for the EventId are the sender's resend of one event, not two events).
 */
export function contactEventsArb(maxLength = 12): fc.Arbitrary<RowEvent[]> {
  return fc
    .uniqueArray(
      fc.record({
        name: fc.constantFrom(...CONTACT_EVENTS),
        timestamp: timestampArb,
        eventId: fc.uuid({ version: 4 }),
        changes: fc.subarray(FIELDS, { minLength: 1 }),
        associate: fc.constantFrom(5, 6, 99),
      }),
      {
        minLength: 1,
        maxLength,
        selector: (e) =>
          [
            e.name,
            e.timestamp,
            e.associate,
            e.name === 'contact.changed' || e.name === 'contact.softdeleted' ? e.changes : '',
          ].join('|'),
      },
    )
    .map((specs) =>
      specs.map(({ name, timestamp, eventId, changes, associate }) => {
        const event = rowEvent(name, { primaryKey: 42, timestamp, eventId, changedByAssociateId: associate });
        return name === 'contact.changed' || name === 'contact.softdeleted'
          ? ({ ...event, Changes: changes } as RowEvent)
          : event;
      }),
    );
}

/** Distinct state events of one webhook. */
export function stateEventsArb(maxLength = 10): fc.Arbitrary<WebhookStateEvent[]> {
  return fc
    .uniqueArray(
      fc.record({
        name: fc.constantFrom('webhook.started', 'webhook.stopped', 'webhook.errors') as fc.Arbitrary<
          'webhook.started' | 'webhook.stopped' | 'webhook.errors'
        >,
        timestamp: timestampArb,
        eventId: fc.uuid({ version: 4 }),
      }),
      { minLength: 1, maxLength, selector: (e) => e.eventId },
    )
    .map((specs) =>
      specs.map(({ name, timestamp, eventId }) => stateEvent(name, { primaryKey: 77, timestamp, eventId })),
    );
}

/** The events in any order, with any of them repeated anywhere. */
export function arrivalsArb<T>(events: T[]): fc.Arbitrary<T[]> {
  return fc.subarray(events).chain((duplicates) => {
    const all = [...events, ...duplicates];
    return fc.shuffledSubarray(all, { minLength: all.length, maxLength: all.length });
  });
}

/** In order of (normalised Timestamp, EventId). */
export function inOrder<T extends { Timestamp: string; EventId: string }>(events: T[]): T[] {
  return [...events].sort((a, b) => (eventSeq(a) < eventSeq(b) ? -1 : 1));
}
