import { nowOf, type TenantDeps, TenantError } from './deps.js';
import { withLease } from './lease.js';
import { tenantEvent } from './lifecycle.js';
import { newRecord, saveRecord } from './records.js';
import { retireOthers, retireTime } from './secrets.js';
import { observeState } from './tenant-state.js';
import type { TenantRecord } from './tenant-store.js';
import { describeWebhooks, findWebhooks } from './webhooks.js';

export interface OffboardResult {
  record: TenantRecord;
  /** The receiver's webhooks deleted in the CRM (none when the tenant is Deleted there). */
  deleted: number[];
  /** When the tenant's secrets stop being accepted. */
  retireAt: string;
  /** Lines for the operator: what was left as it is, and why. */
  notes: string[];
  /** What the whole-tenant erasure erased, where (with `erase`). */
  erasure?: unknown;
}

/**
 * Offboards a tenant: deletes the receiver's webhooks in the CRM (a person's webhook to the same URL
 * is named, not touched), stops the poll and the scheduled full passes for it (its delivery markers
 * go), and sets every secret of it to retire after the grace period, so that deliveries signed
 * before are still taken. `erase` asks for its rows and history to go as well: `deps.eraseTenant`
 * when the receiver has one; without it the data is kept and the notes say so.
 */
export async function offboard(
  deps: TenantDeps & { eraseTenant?: (context: string) => Promise<unknown> },
  context: string,
  options: { erase?: boolean } = {},
): Promise<OffboardResult> {
  return withLease(deps, context, async () => {
    const notes: string[] = [];
    const stored = (await deps.tenants.get(context)) ?? newRecord(deps, context);
    const { state, fields } = await observeState(deps, context, stored.version > 0 ? stored : undefined);
    const deleted: number[] = [];
    if (state.state === 'Deleted') notes.push(`${context} is Deleted in the CRM: its webhooks went with it`);
    else if (!state.running)
      throw new TenantError(
        `${context} is ${state.state} in the CRM, whose API cannot delete its webhooks now: offboard it once it is Running (or Deleted)`,
        context,
        'not-running',
      );
    else {
      const found = findWebhooks(await deps.crm.listWebhooks(context), deps.targetUrl);
      for (const webhook of [found.data, found.state, ...found.duplicates])
        if (webhook && (await deps.crm.deleteWebhook(context, webhook.WebhookId)) === 'deleted')
          deleted.push(webhook.WebhookId);
      if (found.foreign.length > 0)
        notes.push(
          `webhook ${describeWebhooks(found.foreign)} delivers to ${deps.targetUrl} but was not made by the receiver: left as it is (its deliveries are refused once the secrets retire)`,
        );
    }
    await deps.tenants.forgetDeliveries(context);
    const current = (await deps.tenants.get(context)) ?? stored;
    const retireAt = retireTime(deps);
    const { dataWebhookId: _, stateWebhookId: __, ...rest } = retireOthers(current, retireAt);
    const offboardedAt = new Date(nowOf(deps)).toISOString();
    const record = await saveRecord(deps, {
      ...rest,
      ...fields,
      status: 'offboarded',
      offboardedAt,
    });
    let erasure: unknown;
    if (options.erase) {
      if (deps.eraseTenant) erasure = await deps.eraseTenant(context);
      else notes.push(`${context}'s rows and history are not erased: no whole-tenant erasure is wired here`);
    }
    const erased = erasure !== undefined;
    await tenantEvent(deps, 'receiver.tenant.offboarded', {
      context,
      webhooksDeleted: deleted,
      retireAt,
      erased,
    });
    return { record, deleted, retireAt, notes, ...(erased && { erasure }) };
  });
}
