import type { TenantState } from '../crm/index.js';
import type { TenantDeps } from './deps.js';
import { tenantEvent } from './lifecycle.js';
import type { TenantRecord } from './tenant-store.js';

/**
 * The tenant's state now (`GET /api/state/{ctx}`); a running tenant's API is followed to the `Api` it
 * names (`deps.follow`). A state or endpoint other than the record's is published as
 * `receiver.tenant.state-changed`. Answers the state and the record's fields to save.
 */
export async function observeState(
  deps: TenantDeps,
  context: string,
  record: TenantRecord | undefined,
): Promise<{ state: TenantState; fields: Pick<TenantRecord, 'tenantState' | 'endpoint'> }> {
  const state = await deps.crm.tenantState(context);
  const endpoint = state.running ? state.endpoint : record?.endpoint;
  if (state.running && state.endpoint) deps.follow?.(context, state.endpoint);
  if (record !== undefined && (record.tenantState !== state.state || record.endpoint !== endpoint))
    await tenantEvent(deps, 'receiver.tenant.state-changed', {
      context,
      from: record.tenantState,
      to: state.state,
      ...(endpoint !== record.endpoint && { endpoint }),
    });
  return { state, fields: { tenantState: state.state, ...(endpoint !== undefined && { endpoint }) } };
}
