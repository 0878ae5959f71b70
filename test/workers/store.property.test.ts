import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RowEvent, WebhookStateEvent } from '../../lib/events/index.js';
import type { Row, Webhook } from '../../lib/model/types.js';
import { apply, contentHash } from '../../lib/projection.js';
import type { Store } from '../../lib/store/types.js';
import { applyStateEvent } from '../../lib/webhook-state.js';
import { processRowEvent, processStateEvent } from '../../lib/workers/index.js';
import { arrivalsArb, contactEventsArb, inOrder, stateEventsArb } from '../support/arbitraries.js';
import { type LocalDynamo, startDynamoStore } from '../support/dynamo.js';
import { quietObservability } from '../support/workers.js';

let dynamo: LocalDynamo;
let store: Store;

beforeAll(async () => {
  ({ dynamo, store } = await startDynamoStore());
});
afterAll(() => dynamo.close());

let run = 0;
const meta = { messageId: 'm' };

describe('convergence through the real store (dynalite)', () => {
  it('any arrival order with duplicates stores the in-order row and each event once in history', async () => {
    const deps = { store, hooks: {}, ignoreAssociateIds: new Set<number>(), ...quietObservability() };
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

          expect(await store.getRow(context, 'contact', 42)).toEqual(expected);
          const history = await store.listRowEvents(context, 'contact', 42);
          expect(history.map((record) => record.eventId)).toEqual(
            inOrder(events).map((event) => event.EventId),
          );
        },
      ),
      { numRuns: 40 },
    );
  });

  it('any arrival order of state events stores the in-order webhook', async () => {
    const deps = { store, hooks: {}, ...quietObservability() };
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

          expect((await store.loadWebhook(context, 77)).item).toEqual(expected);
        },
      ),
      { numRuns: 30 },
    );
  });
});
