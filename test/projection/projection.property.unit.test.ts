import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RowEvent } from '../../lib/events/index.js';
import { eventSeq } from '../../lib/model/order-key.js';
import type { Row, Webhook } from '../../lib/model/types.js';
import { apply } from '../../lib/projection.js';
import { applyStateEvent, gapsOf } from '../../lib/webhook-state.js';
import {
  arrivalsArb,
  contactEventsArb,
  inOrder,
  reconcileScenarioArb,
  stateEventsArb,
} from '../support/arbitraries.js';

/**
 * The model of `changedFields`: every field named by a changed or softdeleted event newer than the
 * newest event that carried FieldValues, sorted.
 */
function staleFields(events: RowEvent[]): string[] {
  const seqs = events.map((event) => ({ event, seq: eventSeq(event) }));
  const fresh = seqs.filter(({ event }) => event.FieldValues !== undefined).map(({ seq }) => seq);
  const newest = fresh.sort().at(-1) ?? '';
  const stale = seqs.filter(
    ({ event, seq }) =>
      seq > newest && (event.Event === 'contact.changed' || event.Event === 'contact.softdeleted'),
  );
  return [...new Set(stale.flatMap(({ event }) => event.Changes))].sort();
}

describe('convergence (pure)', () => {
  it('any permutation of a row’s events, with duplicates, ends in the in-order row', () => {
    fc.assert(
      fc.property(
        contactEventsArb(14).chain((events) => fc.tuple(fc.constant(events), arrivalsArb(events))),
        ([events, arrivals]) => {
          const expected = inOrder(events).reduce<Row | undefined>(
            (row, event) => apply(row, event),
            undefined,
          );
          // The history (events table) is what tells a very late redelivery from a new event.
          const history = new Set<string>();
          const actual = arrivals.reduce<Row | undefined>((row, event) => {
            const seenBefore = history.has(event.EventId);
            history.add(event.EventId);
            return apply(row, event, { seenBefore });
          }, undefined);
          expect(actual).toEqual(expected);
          expect(actual!.eventCount).toBe(events.length);
          expect(actual!.status === 'deleted').toBe(events.some((e) => e.Event === 'contact.deleted'));
          expect(actual!.changedFields).toEqual(staleFields(events));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('any permutation of a webhook’s state events, with duplicates, ends in the in-order webhook', () => {
    const lastAccepted = {
      seq: '2025-05-14T12:00:04.0000000Z#x',
      timestamp: '2025-05-14T12:00:04.0000000Z',
      eventId: 'x',
    };
    fc.assert(
      fc.property(
        stateEventsArb(10).chain((events) => fc.tuple(fc.constant(events), arrivalsArb(events))),
        ([events, arrivals]) => {
          const fold = (list: typeof events) =>
            list.reduce<Webhook | undefined>(
              (hook, event) => applyStateEvent(hook, event, { lastAccepted }),
              undefined,
            )!;
          const expected = fold(inOrder(events));
          const actual = fold(arrivals);
          expect(actual).toEqual(expected);
          expect(gapsOf(actual)).toEqual(gapsOf(expected));
          expect(actual.eventCount).toBe(events.length);
        },
      ),
      { numRuns: 500 },
    );
  });
});

/** What a reader of the row sees of its data (the rest is bookkeeping, and which event was last). */
function data(row: Row) {
  const { fieldValues, changedFields, status, deletedAt } = row;
  return { fieldValues, changedFields, status, deletedAt };
}

describe('snapshots among live events (pure)', () => {
  it('any interleaving of snapshots (older, newer, same Timestamp, duplicated) with live events ends as the CRM’s row', () => {
    fc.assert(
      fc.property(
        reconcileScenarioArb('CustSnap').chain((scenario) =>
          fc.tuple(fc.constant(scenario), arrivalsArb([...scenario.live, ...scenario.snapshots])),
        ),
        ([scenario, arrivals]) => {
          const fold = (events: RowEvent[]) => {
            // As the worker: an event is in the history once merged; a snapshot that changed nothing is not.
            const history = new Set<string>();
            return events.reduce<Row | undefined>((row, event) => {
              const next = apply(row, event, { seenBefore: history.has(event.EventId) });
              if (next !== row) history.add(event.EventId);
              return next;
            }, undefined)!;
          };
          const actual = fold(arrivals);
          const expected = fold(inOrder([...scenario.live, ...scenario.snapshots]));
          expect(data(actual)).toEqual(data(expected));
          expect(actual.status === 'deleted').toBe(scenario.deleted);
          if (scenario.deleted) return;
          // Every field the row does not name as stale holds the CRM's newest value.
          for (const [field, value] of Object.entries(scenario.truth)) {
            if (!actual.changedFields.includes(field))
              expect([field, actual.fieldValues?.[field]]).toEqual([field, value]);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});
