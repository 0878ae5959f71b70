import { nowOf, type TenantDeps, TenantError } from './deps.js';
import type { TenantRecord } from './tenant-store.js';

/** A record for a context never seen: onboarding, no webhooks, no secrets. */
export function newRecord(deps: TenantDeps, context: string): TenantRecord {
  return {
    context,
    status: 'onboarding',
    secrets: [],
    updatedAt: new Date(nowOf(deps)).toISOString(),
    version: 0,
  };
}

/** Writes the record over the version it was read at; the written record (its next version). */
export async function saveRecord(deps: TenantDeps, record: TenantRecord): Promise<TenantRecord> {
  const next = { ...record, updatedAt: new Date(nowOf(deps)).toISOString() };
  if (!(await deps.tenants.put(next)))
    throw new TenantError(
      `the record of ${record.context} changed while this command ran: run it again`,
      record.context,
      'busy',
    );
  return { ...next, version: next.version + 1 };
}
