import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyErasing } from '../../lib/erasure/project.js';
import { eraseRowData } from '../../lib/erasure/row.js';
import type { Row } from '../../lib/model/types.js';
import { apply } from '../../lib/projection.js';
import { arrivalsArb, contactEventsArb, inOrder } from '../support/arbitraries.js';

const erasesContacts = (entity: string) => entity === 'contact';

describe('erasure (pure)', () => {
  it('any permutation of a row’s events, with duplicates, ends in the in-order row erased once it is deleted, with no data', () => {
    fc.assert(
      fc.property(
        contactEventsArb(14).chain((events) => fc.tuple(fc.constant(events), arrivalsArb(events))),
        ([events, arrivals]) => {
          const plain = inOrder(events).reduce<Row | undefined>(
            (row, event) => apply(row, event),
            undefined,
          )!;
          const history = new Set<string>();
          const actual = arrivals.reduce<Row | undefined>((row, event) => {
            const seenBefore = history.has(event.EventId);
            history.add(event.EventId);
            return applyErasing(row, event, { seenBefore }, erasesContacts);
          }, undefined)!;
          if (plain.status !== 'deleted') {
            expect(actual).toEqual(plain);
            return;
          }
          // The same bookkeeping as without the erasure (order keys, count, status, timestamps), no data.
          expect(actual).toEqual(eraseRowData(plain));
          expect([actual.fieldValues, actual.fieldValuesJson, actual.values, actual.valuesJson]).toEqual([
            undefined,
            undefined,
            undefined,
            undefined,
          ]);
          expect(actual.changedFields).toEqual([]);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('a row erased on request takes no data from any later event, in any order, and keeps its erasedAt', () => {
    fc.assert(
      fc.property(
        contactEventsArb(14).chain((events) =>
          fc.tuple(fc.constant(events), arrivalsArb(events), fc.nat({ max: events.length })),
        ),
        ([, arrivals, cut]) => {
          const before = arrivals.slice(0, Math.max(1, cut));
          const row = before.reduce<Row | undefined>((r, event) => apply(r, event), undefined)!;
          const erased = eraseRowData(row, '2026-12-06T03:00:00.000Z');
          const after = arrivals
            .slice(before.length)
            .reduce((r, event) => applyErasing(r, event, {}, () => false), erased);
          expect(after.erasedAt).toBe('2026-12-06T03:00:00.000Z');
          expect([after.fieldValuesJson, after.valuesJson, after.changedFields]).toEqual([
            undefined,
            undefined,
            [],
          ]);
        },
      ),
      { numRuns: 500 },
    );
  });
});
