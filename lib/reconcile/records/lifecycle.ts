import type { BusEntry } from '../../bus/entry.js';
import { SOURCE } from '../../bus/entry.js';
import type { RowErasedDetail } from '../../erasure/erased-event.js';
import type { ScopeSource } from '../run/cursor.js';

/**
 * The receiver's own events on the bus, subscribable in subscriptions.yml like any event:
 * a gap of a webhook, a webhook set Active again, a reconcile's end. `source` is the receiver's.
 */
export interface LifecycleDetails {
  'receiver.gap.opened': { context: string; webhookId: number; webhookName: string; openedAt: string };
  'receiver.gap.closed': {
    context: string;
    webhookId: number;
    webhookName: string;
    openedAt: string;
    closedAt: string;
  };
  'receiver.webhook.reactivated': { context: string; webhookId: number; webhookName: string; from: string };
  'receiver.reconcile.completed': {
    context: string;
    reason: string;
    from?: string | undefined;
    to: string;
    entities: string[];
    /** Where `entities` came from: the request's, the context's webhooks in the CRM, or the stored rows. */
    scopeFrom?: ScopeSource | undefined;
    /** Entities the run left out, with why (`{"quote": "its events carry no FieldValues: ..."}`). */
    notReconciled: Record<string, string>;
    rowsListed: number;
    rowsChanged: number;
    rowsDeleted: number;
    apiCalls: number;
    durationMs: number;
  };
  'receiver.reconcile.failed': {
    context: string;
    reason: string;
    from?: string | undefined;
    to?: string | undefined;
    /** One line, no credentials. */
    error: string;
  };
  /** An erasure on request (lib/erasure/request.ts): keys and counts, never data. */
  'receiver.row.erased': RowErasedDetail;
}
export type LifecycleType = keyof LifecycleDetails;

export const LIFECYCLE_TYPES = [
  'receiver.gap.opened',
  'receiver.gap.closed',
  'receiver.webhook.reactivated',
  'receiver.reconcile.completed',
  'receiver.reconcile.failed',
  'receiver.row.erased',
] as const satisfies readonly LifecycleType[];

/** The bus entry of a lifecycle event; publish it through the workers' EventPublisher. */
export function lifecycleEntry<T extends LifecycleType>(type: T, detail: LifecycleDetails[T]): BusEntry {
  return { Source: SOURCE, DetailType: type, Detail: JSON.stringify(detail) };
}
