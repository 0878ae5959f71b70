import type { Webhook } from '../model/types.js';
import type { ReconcileOutcome, WebhookRecovery } from '../store/recovery.js';
import type { StoreReader, StoreWriter } from '../store/types.js';
import { DATA_WEBHOOK_NAME } from './deps.js';
import type { TenantRecord } from './tenant-store.js';

/** What the receiver saw of a tenant's deliveries: the webhooks table's state items, markers and recoveries. */
export type TenantActivity = Pick<StoreReader, 'listWebhooks' | 'listRecoveries'> &
  Pick<StoreWriter, 'getLastAccepted'>;

/** A tenant as `GET /tenants` and `ops tenants` show it. */
export type TenantView = Omit<TenantRecord, 'version'> & {
  /** Seconds since the secret its webhooks sign with was accepted. */
  secretAgeSeconds: number | undefined;
  /** When the replaced secrets stop being accepted. */
  retiring: string[];
  /** Its webhooks as their state events told the receiver (state, since when). */
  webhooks?: Array<{ webhookId: number; name: string; state: Webhook['stateName']; since: string }>;
  /** The Timestamp of the last delivery of its data webhook taken. */
  lastDelivery?: string;
  /** Its data webhook's last reconcile. */
  lastReconcile?: ReconcileOutcome;
  /** What an operator should do, when anything (a tenant Deleted in the CRM: offboard it). */
  proposal?: string;
};

/** The record as shown, with what `activity` knows of the tenant's deliveries (when given). */
export async function tenantView(
  { version: _, ...record }: TenantRecord,
  now: number,
  activity: TenantActivity | undefined,
): Promise<TenantView> {
  const current = record.secrets.find((entry) => entry.retireAt === undefined);
  const since = Date.parse(current?.acceptedAt ?? current?.addedAt ?? '');
  const view: TenantView = {
    ...record,
    secretAgeSeconds: Number.isFinite(since) ? Math.round((now - since) / 1000) : undefined,
    retiring: record.secrets.flatMap((entry) => (entry.retireAt ? [entry.retireAt] : [])),
    ...(record.tenantState === 'Deleted' &&
      record.status !== 'offboarded' && { proposal: 'Deleted in the CRM: offboard it' }),
  };
  if (activity === undefined || record.status === 'offboarded') return view;
  const [webhooks, last, recoveries] = await Promise.all([
    activity.listWebhooks(record.context),
    activity.getLastAccepted(record.context, DATA_WEBHOOK_NAME),
    activity.listRecoveries(record.context),
  ]);
  const reconcile = recoveries.find(
    (recovery: WebhookRecovery) => recovery.webhookId === record.dataWebhookId,
  )?.reconcile;
  return {
    ...view,
    webhooks: webhooks.map((webhook) => ({
      webhookId: webhook.webhookId,
      name: webhook.webhookName,
      state: webhook.stateName,
      since: webhook.stateChangedAt,
    })),
    ...(last && { lastDelivery: last.timestamp }),
    ...(reconcile && { lastReconcile: reconcile }),
  };
}
