import { type CrmClient, crmTableOf, isRefusal, whyNotInCrm } from '../../crm/index.js';
import { FIXED_ENTITIES, familyOf, isDynamicEntity } from '../../events/index.js';
import type { StoredRows } from '../../store/row-set.js';
import type { ReconcileRequest } from '../request.js';
import type { ScopeSource } from './cursor.js';
import { fixedShape, learnedShape, type SnapshotShape } from './fields.js';

/** What a run covers: the entities it reconciles, in order, and those it leaves out with why. */
export interface Scope {
  entities: string[];
  notReconciled: Record<string, string>;
  scopeFrom: ScopeSource;
}

export interface ScopeDeps {
  crm: Pick<CrmClient, 'listWebhooks'>;
  stored: Pick<StoredRows, 'sampleFieldValues' | 'hasAny'>;
  stores(entity: string): boolean;
}

/** The reasons of {@link Scope.notReconciled}, each said once. */
export const NOT_RECONCILED = {
  notStored: 'not in ENTITIES',
  noSample: 'no stored row to learn its fields from',
  noWebhookApi: (status: number | undefined) =>
    `the CRM refused the webhook listing (HTTP ${status ?? '?'}): lists and custom tables unknown; name them in entities`,
  noWebhooks:
    'the CRM lists no webhook of the context: lists and custom tables unknown; name them in entities',
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
 * The entities a run covers, fixed when it starts. The request's `entities`; else those the context's
 * webhooks in the CRM name in their Events (one `listWebhooks`), which the receiver stores
 * (ENTITIES); else, when the CRM refuses the webhook listing (an app without the webhook agent) or
 * lists no webhook, the fixed entities the receiver holds rows of for the context (lists and custom
 * tables cannot be found that way: said). Each one the run cannot reconcile is left
 * out with its reason, never silently: no table in the CRM (`quote`: its events carry no
 * FieldValues), a list or custom table with no stored row to learn its fields from, an entity named
 * in `entities` that ENTITIES leaves out.
 */
export async function runScope(request: ReconcileRequest, deps: ScopeDeps, shapes: Shapes): Promise<Scope> {
  const notReconciled: Record<string, string> = {};
  const named = request.entities;
  let scopeFrom: ScopeSource = 'request';
  let wanted = named ? [...new Set(named)] : await webhookEntities(request.context, deps, notReconciled);
  if (wanted === undefined) {
    scopeFrom = 'stored rows';
    wanted = await storedEntities(request.context, deps);
  } else if (!named) scopeFrom = 'webhooks';
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
  return { entities, notReconciled, scopeFrom };
}

/**
 * The entities the context's webhooks name in their Events: the fixed ones in their order, then
 * the lists and custom tables sorted; undefined when the CRM refuses the listing or lists none.
 */
async function webhookEntities(
  context: string,
  deps: ScopeDeps,
  notReconciled: Record<string, string>,
): Promise<string[] | undefined> {
  try {
    const webhooks = await deps.crm.listWebhooks(context);
    if (webhooks.length === 0) return dynamicUnknown(notReconciled, NOT_RECONCILED.noWebhooks);
    const named = new Set(
      webhooks.flatMap((webhook) => webhook.Events.map((event) => familyOf(event)?.entity)),
    );
    const dynamic = [...named].filter(
      (entity): entity is string => entity !== undefined && isDynamicEntity(entity),
    );
    return [...FIXED_ENTITIES.filter((entity) => named.has(entity)), ...dynamic.sort()];
  } catch (error) {
    if (!isRefusal(error)) throw error;
    return dynamicUnknown(notReconciled, NOT_RECONCILED.noWebhookApi(error.status));
  }
}

/** No scope from the webhooks: the lists and custom tables, which stored rows cannot name, said left out. */
function dynamicUnknown(notReconciled: Record<string, string>, why: string): undefined {
  notReconciled['list.*'] = why;
  notReconciled['y_*'] = why;
  return undefined;
}

/** The fixed entities the receiver stores and holds rows of for `context` (one index Query each). */
async function storedEntities(context: string, deps: ScopeDeps): Promise<string[]> {
  const stored = FIXED_ENTITIES.filter((entity) => deps.stores(entity) && crmTableOf(entity) !== undefined);
  const held = await Promise.all(stored.map((entity) => deps.stored.hasAny(context, entity)));
  return stored.filter((_, index) => held[index]);
}
