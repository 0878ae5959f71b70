import { changeWebhook, readWebhook } from './change-webhook.js';
import { DATA_WEBHOOK_NAME, STATE_WEBHOOK_NAME, type TenantDeps, TenantError } from './deps.js';
import { withLease } from './lease.js';
import { tenantEvent } from './lifecycle.js';
import { saveRecord } from './records.js';
import { fingerprint, newSecret } from './secret-set.js';
import { acceptSecret, retireOthers, retireTime } from './secrets.js';
import { observeState } from './tenant-state.js';
import type { TenantRecord } from './tenant-store.js';

/**
 * Replaces a tenant's secret with no delivery refused: the new one is accepted by every ingest first,
 * then set on the data and state webhooks (each PATCH saved by the CRM only after its `test`
 * delivery, signed with it, got 200), and only then are the older ones set to retire after the grace
 * period (`retireDueSecrets` removes them). A PATCH that fails leaves every secret accepted: run
 * again. Answers the record and when the old secrets retire.
 */
export async function rotateSecret(
  deps: TenantDeps,
  context: string,
): Promise<{ record: TenantRecord; retireAt: string }> {
  return withLease(deps, context, async () => {
    let record = await deps.tenants.get(context);
    if (record?.status !== 'active' || record.dataWebhookId === undefined)
      throw new TenantError(`${context} is not onboarded: onboard it first`, context, 'not-onboarded');
    const { state, fields } = await observeState(deps, context, record);
    if (!state.running)
      throw new TenantError(
        `${context} is ${state.state} in the CRM: rotate its secret once it is Running`,
        context,
        'not-running',
      );
    if (fields.tenantState !== record.tenantState || fields.endpoint !== record.endpoint)
      record = await saveRecord(deps, { ...record, ...fields });
    const save = (next: TenantRecord) => saveRecord(deps, next);
    const secret = newSecret();
    record = await acceptSecret(deps, record, secret, save);
    const webhooks: Array<[number | undefined, string]> = [
      [record.dataWebhookId, DATA_WEBHOOK_NAME],
      [record.stateWebhookId, STATE_WEBHOOK_NAME],
    ];
    const ids: number[] = [];
    for (const [id, name] of webhooks) {
      if (id === undefined) continue;
      // Read first: the PATCH is applied only while it is still the receiver's (its name and URL).
      const read = await readWebhook(deps, context, id, ['Secret']);
      await changeWebhook(deps, context, read, name, () => ({ Secret: secret }));
      ids.push(id);
    }
    const retireAt = retireTime(deps);
    record = await save(retireOthers(record, retireAt, fingerprint(secret)));
    await tenantEvent(deps, 'receiver.tenant.rotated', { context, webhookIds: ids, retireAt });
    return { record, retireAt };
  });
}
