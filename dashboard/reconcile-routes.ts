import type { Gap } from '../lib/model/types.js';
import type { ReconcileRequest } from '../lib/reconcile/request.js';
import { ManualRequestError, manualRequest } from '../lib/reconcile/triggers/manual.js';
import type { WebhookRecovery } from '../lib/store/recovery.js';
import type { StoreReader } from '../lib/store/types.js';
import { gapsOf } from '../lib/webhook-state.js';
import { type AdminRoute, HttpError } from './route-server.js';
import type { DashboardSource, Reconciliation } from './source.js';

/**
 * A gap as `GET /gaps` answers it: with, where the source knows, whether its changes can be fetched back;
 * and what became of its webhook's recovery: the last reconcile that named it, and when the poll last set
 * it Active again (lib/store/recovery.ts; absent while none).
 */
export type GapView = Gap & {
  recoverable?: boolean;
  recovery?: string;
  lastReconcile?: WebhookRecovery['reconcile'];
  reactivatedAt?: string;
};

/**
 * `GET /gaps` (each gap says whether reconciliation can recover it, and what became of it) and
 * `POST /reconcile?context=C[&from=ISO&to=ISO&entities=a,b&full=true]` (queues a manual reconcile;
 * a wrong parameter is a 400 naming it, nothing queued; reconciliation off is a 409 naming CRM_API_URL).
 */
export function reconcileRoutes(source: DashboardSource): AdminRoute[] {
  return [
    {
      method: 'GET',
      pattern: /^\/gaps$/,
      handle: (_, query): Promise<GapView[]> =>
        gapViews(source.store, query.get('context') ?? undefined, source.reconciliation),
    },
    {
      method: 'POST',
      pattern: /^\/reconcile$/,
      handle: async (_, query) => {
        const reconciliation = source.reconciliation;
        if (reconciliation === undefined)
          throw new HttpError(
            404,
            `${source.info.name} cannot queue a reconcile; use npm run ops -- reconcile`,
          );
        const request = parseQuery(query);
        if (!reconciliation.enabled) throw new HttpError(409, reconciliation.note);
        await reconciliation.enqueue(request);
        return { queued: request };
      },
    },
  ];
}

/**
 * The gaps of a context's webhooks (or of all) as `GET /gaps` and `npm run ops -- gaps` answer them: each
 * with whether `reconciliation` (where the source has one) can recover it, and its webhook's recovery
 * (last reconcile, reactivation) from the webhooks table's `recovery#<id>` items.
 */
export async function gapViews(
  store: Pick<StoreReader, 'listWebhooks' | 'listRecoveries'>,
  context: string | undefined,
  reconciliation?: Reconciliation,
): Promise<GapView[]> {
  const [webhooks, recoveries] = await Promise.all([
    store.listWebhooks(context),
    store.listRecoveries(context),
  ]);
  const byWebhook = new Map(recoveries.map((r) => [`${r.context}/${r.webhookId}`, r]));
  return webhooks.flatMap(gapsOf).map((gap): GapView => {
    const recovered = byWebhook.get(`${gap.context}/${gap.webhookId}`);
    return {
      ...gap,
      ...(reconciliation && { recoverable: reconciliation.enabled, recovery: reconciliation.note }),
      ...(recovered?.reconcile && { lastReconcile: recovered.reconcile }),
      ...(recovered?.reactivatedAt && { reactivatedAt: recovered.reactivatedAt }),
    };
  });
}

/** The one line a source without CRM_API_URL says of every gap (the ready line and the page say it too). */
export const RECONCILIATION_OFF =
  'reconciliation is off: CRM_API_URL is not set, so gaps cannot be recovered (set CRM_API_URL and CRM_CREDENTIALS, then restart)';

/** What the page and the answers say of reconciliation, from the CRM API base or its absence. */
export function reconciliationNote(apiUrl: string | undefined): string {
  return apiUrl === undefined ? RECONCILIATION_OFF : `gaps are reconciled from the CRM API ${apiUrl}`;
}

/** A reconciliation that can only refuse: what a source without CRM_API_URL offers. */
export function reconciliationOff(): Reconciliation {
  return {
    enabled: false,
    note: RECONCILIATION_OFF,
    enqueue: async () => {
      throw new HttpError(409, RECONCILIATION_OFF);
    },
  };
}

function parseQuery(query: URLSearchParams): ReconcileRequest {
  const params: Record<string, string> = {};
  for (const [name, value] of query) {
    if (Object.hasOwn(params, name))
      throw new HttpError(400, `${name.slice(0, 64)}: given twice; once accepted`);
    params[name] = value;
  }
  try {
    return manualRequest(params, new Date());
  } catch (error) {
    if (error instanceof ManualRequestError) throw new HttpError(400, error.message);
    throw error;
  }
}
