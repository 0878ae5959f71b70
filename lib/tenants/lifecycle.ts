import { SOURCE } from '../bus/entry.js';
import type { TenantDeps } from './deps.js';

/** The receiver's lifecycle events of a tenant, on the bus like the reconciliation's (never a secret). */
export interface TenantLifecycleDetails {
  'receiver.tenant.onboarded': {
    context: string;
    dataWebhookId: number;
    stateWebhookId: number;
    events: number;
    changes: string[];
  };
  'receiver.tenant.rotated': { context: string; webhookIds: number[]; retireAt: string };
  'receiver.tenant.offboarded': {
    context: string;
    webhooksDeleted: number[];
    retireAt: string;
    erased: boolean;
  };
  'receiver.tenant.state-changed': {
    context: string;
    from: string | undefined;
    to: string;
    endpoint?: string | undefined;
  };
}
export type TenantLifecycleType = keyof TenantLifecycleDetails;

export const TENANT_LIFECYCLE_TYPES = [
  'receiver.tenant.onboarded',
  'receiver.tenant.rotated',
  'receiver.tenant.offboarded',
  'receiver.tenant.state-changed',
] as const satisfies readonly TenantLifecycleType[];

type TenantLifecycleField = {
  [T in TenantLifecycleType]: keyof TenantLifecycleDetails[T];
}[TenantLifecycleType];
/** The detail fields of the tenant events (lib/bus/never-matching.ts knows them). */
export const TENANT_LIFECYCLE_FIELDS = [
  'context',
  'dataWebhookId',
  'stateWebhookId',
  'events',
  'changes',
  'webhookIds',
  'retireAt',
  'webhooksDeleted',
  'erased',
  'from',
  'to',
  'endpoint',
] as const satisfies readonly TenantLifecycleField[];

/** Publishes one tenant lifecycle event (nothing when the deps have no publisher). */
export async function tenantEvent<T extends TenantLifecycleType>(
  deps: TenantDeps,
  type: T,
  detail: TenantLifecycleDetails[T],
): Promise<void> {
  await deps.publish?.({ Source: SOURCE, DetailType: type, Detail: JSON.stringify(detail) });
}
