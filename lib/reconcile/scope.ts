import { CrmApiError, type CrmClient, crmTableOf, whyNotInCrm } from '../crm/index.js';
import { FIXED_ENTITIES, familyOf, isDynamicEntity } from '../events/index.js';
import type { StoredRowKeys } from '../store/row-set.js';
import { fixedShape, learnedShape, type SnapshotShape } from './fields.js';
import type { ReconcileRequest } from './request.js';

/** What a run covers: the entities it reconciles, in order, and those it leaves out with why. */
export interface Scope {
  entities: string[];
  notReconciled: Record<string, string>;
}

export interface ScopeDeps {
  crm: Pick<CrmClient, 'listWebhooks'>;
  stored: Pick<StoredRowKeys, 'sampleFieldValues'>;
  stores(entity: string): boolean;
}

/** The reasons of {@link Scope.notReconciled}, each said once. */
export const NOT_RECONCILED = {
  notStored: 'not in ENTITIES',
  noSample: 'no stored row to learn its fields from',
  noWebhookApi:
    'the CRM refused the webhook listing (403): lists and custom tables unknown; name them in entities',
} as const;

/**
 * The snapshot shapes of one invocation, by entity: a fixed entity's fields from its samples, a list's
 * or custom table's learnt from its newest stored rows; each field's form from those rows (read once
 * per invocation).
 */
export type Shapes = Map<string, SnapshotShape | undefined>;

/** The shape of `entity`'s snapshots (undefined: no stored row to learn a list's or table's fields from). */
export async function shapeOf(
  deps: Pick<ScopeDeps, 'stored'>,
  shapes: Shapes,
  context: string,
  entity: string,
): Promise<SnapshotShape | undefined> {
  if (!shapes.has(entity)) {
    const sample = await deps.stored.sampleFieldValues(context, entity);
    shapes.set(
      entity,
      fixedShape(entity, sample) ?? (sample === undefined ? undefined : learnedShape(sample)),
    );
  }
  return shapes.get(entity);
}

/**
 * The entities a run covers (issue 25, item 3), fixed when it starts. The request's `entities`, else
 * every entity the receiver stores (ENTITIES): the fixed ones, and the lists and custom tables the
 * context's webhooks in the CRM name (one `listWebhooks`; refused with 403, the fixed ones only, and
 * the result says so). Each one the run cannot reconcile is left out with its reason, never silently:
 * no table in the CRM (`quote`: its events carry no FieldValues), a list or custom table with no
 * stored row to learn its fields from, an entity named in `entities` that ENTITIES leaves out.
 */
export async function runScope(request: ReconcileRequest, deps: ScopeDeps, shapes: Shapes): Promise<Scope> {
  const notReconciled: Record<string, string> = {};
  const named = request.entities;
  const wanted = named
    ? [...new Set(named)]
    : [...FIXED_ENTITIES, ...(await webhookEntities(request.context, deps, notReconciled))];
  const entities: string[] = [];
  for (const entity of wanted) {
    // One the receiver does not store is left out, said only when the request named it.
    if (!deps.stores(entity)) {
      if (named) notReconciled[entity] = NOT_RECONCILED.notStored;
    } else if (crmTableOf(entity) === undefined) notReconciled[entity] = whyNotInCrm(entity);
    else if ((await shapeOf(deps, shapes, request.context, entity)) === undefined)
      notReconciled[entity] = NOT_RECONCILED.noSample;
    else entities.push(entity);
  }
  return { entities, notReconciled };
}

/** The lists and custom tables the context's webhooks name in their Events, sorted. */
async function webhookEntities(
  context: string,
  deps: ScopeDeps,
  notReconciled: Record<string, string>,
): Promise<string[]> {
  try {
    const webhooks = await deps.crm.listWebhooks(context);
    const named = webhooks.flatMap((webhook) => webhook.Events.map((event) => familyOf(event)?.entity));
    return [...new Set(named)]
      .filter((entity): entity is string => entity !== undefined && isDynamicEntity(entity))
      .sort();
  } catch (error) {
    if (!(error instanceof CrmApiError) || error.status !== 403) throw error;
    notReconciled['list.*'] = NOT_RECONCILED.noWebhookApi;
    notReconciled['y_*'] = NOT_RECONCILED.noWebhookApi;
    return [];
  }
}
