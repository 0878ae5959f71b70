import fc from 'fast-check';
import type { RowEvent } from '../../lib/events/index.js';
import { validEvent } from '../../lib/events/index.js';
import { snapshotMessage } from '../../lib/reconcile/run/snapshot-message.js';
import { at, rowEvent } from './workers.js';

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

const FIELDS = ['name', 'department', 'number1'] as const;
const PRIMARY_KEY = 42;

export function reconcileScenarioArb(context: string): fc.Arbitrary<ReconcileScenario> {
  return fc
    .record({
      changes: fc.uniqueArray(
        fc.record({ second: fc.integer({ min: 1, max: 12 }), field: fc.constantFrom(...FIELDS) }),
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
