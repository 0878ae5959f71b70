import { describe, expect, it } from 'vitest';
import { CrmApiError, CrmAuthError, CrmRetryLater, isRefusal } from '../../lib/crm/index.js';
import type { RowEntity } from '../../lib/model/types.js';
import { receiverAndSimulator, reconcileRig, request, subscribe } from './support.js';

const started = receiverAndSimulator();

/** The entities, in the order a run takes them, with their CRM table and how the CRM answers it. */
const TABLES = [
  { entity: 'contact', table: 'contact', refused: 403 },
  { entity: 'activity', table: 'appointment', refused: 501 },
  { entity: 'document', table: 'document' },
  { entity: 'person', table: 'person', refused: 400 },
  { entity: 'project', table: 'project' },
  { entity: 'sale', table: 'sale', refused: 404 },
  { entity: 'ticket', table: 'ticket' },
] as const;

describe('a table the CRM refuses is that entity’s alone', () => {
  it('403, 400, 404 and 501 each leave one entity out with the CRM’s status and first line; the entities after them converge and the run completes', async () => {
    const { receiver, crm } = started;
    const context = 'CustRefusing';
    for (const { table } of TABLES)
      for (const id of [1, 2]) crm.core.change(context, { op: 'create', table, id });
    const entities = TABLES.map(({ entity }) => entity);
    await subscribe(crm, context, entities);
    crm.faults.set({
      refusedTables: Object.fromEntries(
        TABLES.flatMap((t) => ('refused' in t ? [[t.table, t.refused]] : [])),
      ),
    });
    try {
      const rig = await reconcileRig(crm, receiver, { maxReceives: 1, expectFailures: true });
      await rig.enqueue(request(context, { reason: 'full', full: true }));
      await rig.runReconciles();
      await rig.drainWorkers();

      expect(await rig.dlq()).toEqual([]);
      expect(rig.lifecycle.published.map((e) => e.DetailType)).toEqual(['receiver.reconcile.completed']);
      const [completed] = rig.lifecycle.details() as Array<{
        entities: string[];
        scopeFrom: string;
        notReconciled: Record<string, string>;
        rowsListed: number;
      }>;
      // The run covers what the context's webhook names (nothing else is asked), as ENTITIES stores.
      expect(completed!.entities).toEqual(entities);
      expect(completed!.scopeFrom).toBe('webhooks');
      expect(completed!.rowsListed).toBe(6);
      for (const t of TABLES) {
        const stored = await receiver.store.getRow(context, t.entity as RowEntity, 1);
        if (!('refused' in t)) {
          expect(stored, t.entity).toMatchObject({ status: 'active' });
          continue;
        }
        expect(stored, t.entity).toBeUndefined();
        const why = completed!.notReconciled[t.entity]!;
        expect(why).toBe(
          `${t.entity} from the CRM's table ${t.table} (key ${t.table}_id): GET /${context}/api/v1/archive/dynamic answered HTTP ${t.refused}: the table ${t.table} is refused (simulated)`,
        );
      }
      expect(Object.keys(completed!.notReconciled).sort()).toEqual(['activity', 'contact', 'person', 'sale']);
    } finally {
      crm.faults.set({});
    }
  }, 60_000);
});

describe('a refusal, which retrying cannot fix', () => {
  it('is a 4xx other than 401, 408 and 429, or a 501; 429, the other 5xx, no answer and the credentials are retried as before', () => {
    const answered = (status: number) => isRefusal(new CrmApiError('x', 'C', { status }));
    expect([400, 403, 404, 405, 409, 410, 422, 501].filter(answered)).toEqual([
      400, 403, 404, 405, 409, 410, 422, 501,
    ]);
    expect([401, 408, 429, 500, 502, 503, 504].filter(answered)).toEqual([]);
    expect(isRefusal(new CrmApiError('no answer (5 attempts)', 'C'))).toBe(false);
    expect(isRefusal(new CrmAuthError('401', 'C', { status: 401 }))).toBe(false);
    expect(isRefusal(new CrmRetryLater('429', 'C', 'throttled', 1000, { status: 429 }))).toBe(false);
  });
});
