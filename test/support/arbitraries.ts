import fc from 'fast-check';
import { type RowEvent, validEvent, type WebhookStateEvent } from '../../lib/events/index.js';
import { eventSeq } from '../../lib/model/order-key.js';
import { snapshotMessage } from '../../lib/reconcile/run/snapshot-message.js';
import { at, rowEvent, stateEvent } from './workers.js';

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

/**
 * A model of one contact in the CRM and what the receiver hears of it: created at second 0, then each
 * change at its own second sets one field to a value never seen before, then maybe deleted. Live
 * events of some changes are lost (the CRM discarded them) and snapshots are fetched at seconds F, each
 * holding the truth of every change before F, and of a change at exactly F or not (both happen: the
 * CRM's clock has seconds only). A change is lost only before the newest snapshot (what a reconcile
 * after the outage guarantees), a deletion only when a snapshot after it answers 404.
 */
export interface ReconcileScenario {
  /** The live events the receiver gets (distinct; arrivals add duplicates). */
  live: RowEvent[];
  /** The snapshots, as the reconcile's messages carry them. */
  snapshots: RowEvent[];
  /** The CRM's row at the end. */
  truth: Record<string, unknown>;
  deleted: boolean;
}

/** The fields a scenario's changes set. */
const SCENARIO_FIELDS = ['name', 'department', 'number1'] as const;
const PRIMARY_KEY = 42;

export function reconcileScenarioArb(context: string): fc.Arbitrary<ReconcileScenario> {
  return fc
    .record({
      changes: fc.uniqueArray(
        fc.record({ second: fc.integer({ min: 1, max: 12 }), field: fc.constantFrom(...SCENARIO_FIELDS) }),
        { maxLength: 6, selector: (c) => c.second },
      ),
      deletedAt: fc.option(fc.integer({ min: 13, max: 15 }), { nil: undefined }),
      fetches: fc.array(fc.record({ second: fc.integer({ min: 0, max: 16 }), tie: fc.boolean() }), {
        minLength: 1,
        maxLength: 3,
      }),
      lost: fc.array(fc.boolean(), { minLength: 7, maxLength: 7 }),
    })
    .map(({ changes, deletedAt, fetches, lost }) => {
      const created = rowEvent('contact.created', { context, primaryKey: PRIMARY_KEY, timestamp: at(0) });
      const base = { ...created.FieldValues, name: 'n0', department: 'd0', number1: 0 };
      const ordered = [...changes].sort((a, b) => a.second - b.second);
      /** The CRM's row at `second`, with the change at exactly that second or not. */
      const truthAt = (second: number, tie: boolean) => {
        const values: Record<string, unknown> = { ...base };
        for (const change of ordered) {
          if (change.second < second || (tie && change.second === second)) {
            values[change.field] =
              change.field === 'number1' ? change.second : `${change.field}${change.second}`;
          }
        }
        return values;
      };
      const newestFetch = Math.max(...fetches.map((f) => f.second));
      const fetched = fetches.map(({ second, tie }) => {
        const gone = deletedAt !== undefined && (second > deletedAt || (tie && second === deletedAt));
        const row = { context, entity: 'contact', primaryKey: PRIMARY_KEY, fetchedAt: new Date(at(second)) };
        const message = gone
          ? snapshotMessage({ ...row, deleted: true })
          : snapshotMessage({ ...row, fieldValues: JSON.stringify(truthAt(second, tie)) });
        return validEvent(JSON.parse(String(message.body))) as RowEvent;
      });
      // The same answer fetched twice at the same F is one event (its EventId says so).
      const snapshots = [...new Map(fetched.map((event) => [event.EventId, event])).values()];
      const live: RowEvent[] = [{ ...created, FieldValues: base } as RowEvent];
      ordered.forEach((change, i) => {
        if (lost[i] === true && change.second < newestFetch) return;
        const event = rowEvent('contact.changed', {
          context,
          primaryKey: PRIMARY_KEY,
          timestamp: at(change.second),
        });
        live.push({ ...event, Changes: [change.field] } as RowEvent);
      });
      if (deletedAt !== undefined && !(lost[6] === true && newestFetch > deletedAt)) {
        live.push(
          rowEvent('contact.deleted', { context, primaryKey: PRIMARY_KEY, timestamp: at(deletedAt) }),
        );
      }
      return {
        live,
        snapshots,
        truth: truthAt(Number.POSITIVE_INFINITY, true),
        deleted: deletedAt !== undefined,
      };
    });
}
