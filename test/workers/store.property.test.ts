import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RowEvent, WebhookStateEvent } from '../../lib/events/index.js';
import type { Row, Webhook } from '../../lib/model/types.js';
import { apply } from '../../lib/projection.js';
import { contentHash } from '../../lib/recognition.js';
import { applyStateEvent } from '../../lib/webhook-state.js';
import { processRowEvent, processStateEvent } from '../../lib/workers/index.js';
import {
  arrivalsArb,
  contactEventsArb,
  inOrder,
  reconcileScenarioArb,
  stateEventsArb,
} from '../support/arbitraries.js';
import { dynamoStoreForFile } from '../support/dynamo.js';
import { quietObservability, rowWorkerDeps } from '../support/workers.js';

const db = dynamoStoreForFile();

let run = 0;
const meta = { messageId: 'm' };

describe('convergence through the real store (dynalite)', () => {
  it('any arrival order with duplicates stores the in-order row and each event once in history', async () => {
    const deps = rowWorkerDeps(db.store);
    await fc.assert(
      fc.asyncProperty(
        contactEventsArb(12).chain((events) => fc.tuple(fc.constant(events), arrivalsArb(events))),
        async ([events, arrivals]) => {
          const context = `CustProp${run++}`; // a fresh row per run
          const retarget = (event: RowEvent): RowEvent => ({ ...event, ContextIdentifier: context });
          const expected = inOrder(events)
            .map(retarget)
            .reduce<Row | undefined>(
              (row, event) =>
                apply(row, event, { contentHash: contentHash(JSON.stringify(event), event.EventId) }),
              undefined,
            );
          for (const event of arrivals) await processRowEvent(deps, retarget(event), meta);

          expect(await db.store.getRow(context, 'contact', 42)).toEqual(expected);
          const history = await db.store.listRowEvents(context, 'contact', 42);
          expect(history.map((record) => record.eventId)).toEqual(
            inOrder(events).map((event) => event.EventId),
          );
        },
      ),
      { numRuns: 40 },
    );
  });

  it('snapshots interleaved with live events (older, newer, same Timestamp, duplicated) end as the CRM’s row, each change counted once', async () => {
    const deps = rowWorkerDeps(db.store);
    await fc.assert(
      fc.asyncProperty(
        reconcileScenarioArb('CustSnapProp').chain((scenario) =>
          fc.tuple(fc.constant(scenario), arrivalsArb([...scenario.live, ...scenario.snapshots])),
        ),
        async ([scenario, arrivals]) => {
          const context = `CustSnapProp${run++}`; // a fresh row per run
          for (const event of arrivals) {
            const retargeted = { ...event, ContextIdentifier: context };
            await processRowEvent(deps, retargeted, { messageId: 'm', rawBody: JSON.stringify(retargeted) });
          }

          const row = (await db.store.getRow(context, 'contact', 42))!;
          const history = await db.store.listRowEvents(context, 'contact', 42);
          const recorded = history.map((record) => record.eventId);
          expect(new Set(recorded).size).toBe(recorded.length);
          expect(recorded).toEqual(expect.arrayContaining(scenario.live.map((event) => event.EventId)));
          // Every live event counts; a snapshot only when it changed the row (only then is it recorded).
          expect(row.eventCount).toBe(history.length);
          expect(row.status === 'deleted').toBe(scenario.deleted);
          if (scenario.deleted) return;
          for (const [field, value] of Object.entries(scenario.truth)) {
            if (!row.changedFields.includes(field))
              expect([field, row.fieldValues?.[field]]).toEqual([field, value]);
          }
        },
      ),
      { numRuns: 30 },
    );
  });

  it('any arrival order of state events stores the in-order webhook', async () => {
    const deps = { store: db.store, hooks: {}, ...quietObservability() };
    await fc.assert(
      fc.asyncProperty(
        stateEventsArb(8).chain((events) => fc.tuple(fc.constant(events), arrivalsArb(events))),
        async ([events, arrivals]) => {
          const context = `CustStateProp${run++}`; // nothing accepted: every gap opens at its own event
          const retarget = (event: WebhookStateEvent): WebhookStateEvent => ({
            ...event,
            ContextIdentifier: context,
          });
          const expected = inOrder(events)
            .map(retarget)
            .reduce<Webhook | undefined>((hook, event) => applyStateEvent(hook, event), undefined);
          for (const event of arrivals) await processStateEvent(deps, retarget(event), meta);

          expect((await db.store.loadWebhook(context, 77)).item).toEqual(expected);
        },
      ),
      { numRuns: 30 },
    );
  });
});
