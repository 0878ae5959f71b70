import type { CrmWebhook, WebhookFields } from '../crm/index.js';
import { changeWebhook } from './change-webhook.js';
import { DATA_WEBHOOK_NAME, nowOf, STATE_WEBHOOK_NAME, type TenantDeps, TenantError } from './deps.js';
import { withLease } from './lease.js';
import { tenantEvent } from './lifecycle.js';
import { newRecord, saveRecord } from './records.js';
import { fingerprint, newSecret } from './secret-set.js';
import { acceptSecret, currentSecret, retireOthers, retireTime, waitAccepted } from './secrets.js';
import { observeState } from './tenant-state.js';
import type { TenantRecord } from './tenant-store.js';
import {
  describeWebhooks,
  findWebhooks,
  sameEvents,
  sameHeaders,
  stateEventsOf,
  stateHeaders,
} from './webhooks.js';

export interface OnboardOptions {
  /** The data webhook's Events (lib/tenants/events.ts `wantedEvents`). */
  events: string[];
  /** Mailed by the CRM when the data webhook goes to TooManyErrors. */
  errorsEmail?: string | undefined;
}

export interface OnboardResult {
  record: TenantRecord;
  /** What this run changed in the CRM, in words (empty: nothing to do). */
  changes: string[];
}

/**
 * Onboards a tenant: checks it is Running, makes the ingest accept a fresh secret (32 random bytes)
 * before the CRM signs with it, creates (or finds, by name and TargetUrl, and brings to the wanted
 * Events and secret) the data webhook and the state webhook, deletes duplicates of its own, and
 * records the tenant. Run twice, at once, or after a crash half-way, it ends with one pair. A webhook
 * of the same TargetUrl that someone else made is reported (TenantError 'conflict'), never changed.
 */
export async function onboard(
  deps: TenantDeps,
  context: string,
  options: OnboardOptions,
): Promise<OnboardResult> {
  return withLease(deps, context, async () => {
    const changes: string[] = [];
    const stored = await deps.tenants.get(context);
    const { state, fields } = await observeState(deps, context, stored);
    if (!state.running)
      throw new TenantError(
        `${context} is ${state.state} in the CRM: onboard it once it is Running`,
        context,
        'not-running',
      );
    const found = findWebhooks(await deps.crm.listWebhooks(context), deps.targetUrl);
    if (found.foreign.length > 0)
      throw new TenantError(
        `${context}: webhook ${describeWebhooks(found.foreign)} delivers to ${deps.targetUrl} too and was not made by the receiver; it is left as it is: delete it (or point it elsewhere) in the CRM, then onboard again`,
        context,
        'conflict',
      );
    let record: TenantRecord = stored
      ? { ...stored, status: stored.status === 'active' ? 'active' : 'onboarding' }
      : newRecord(deps, context);
    record = await saveRecord(deps, record);

    let secret = await currentSecret(deps, record);
    // A data webhook this record did not make (or a secret the set lost) gets a secret of this run.
    const adopt = found.data !== undefined && found.data.WebhookId !== record.dataWebhookId;
    // A new secret goes onto the webhooks that exist: they may sign with one the set no longer holds.
    const fresh = secret === undefined || adopt;
    if (fresh) {
      secret = newSecret();
      const save = (next: TenantRecord) => saveRecord(deps, next);
      record = await acceptSecret(deps, record, secret, save);
      // A secret the webhook may still sign with (adopted) stays accepted for the grace period.
      record = await save(retireOthers(record, retireTime(deps), fingerprint(secret)));
      changes.push('a new secret accepted');
    } else await waitAccepted(deps, record, record.secrets.find((entry) => !entry.retireAt)!.fingerprint);

    const wanted: Omit<WebhookFields, 'Name'> = {
      Events: options.events,
      TargetUrl: deps.targetUrl,
      Secret: secret,
      ...(options.errorsEmail !== undefined && { ErrorsEmail: options.errorsEmail }),
    };
    let data: CrmWebhook;
    if (found.data === undefined) {
      data = await deps.crm.createWebhook(context, { Name: DATA_WEBHOOK_NAME, State: 'Active', ...wanted });
      changes.push(`data webhook ${data.WebhookId} created`);
    } else {
      const changed = await changeWebhook(deps, context, found.data, DATA_WEBHOOK_NAME, (read) => ({
        ...(!sameEvents(read.Events, options.events) && { Events: options.events }),
        ...(fresh && { Secret: secret }),
        ...(options.errorsEmail !== undefined &&
          read.ErrorsEmail !== options.errorsEmail && { ErrorsEmail: options.errorsEmail }),
      }));
      data = changed.webhook;
      if (changed.changed.length > 0)
        changes.push(`data webhook ${data.WebhookId}: ${changed.changed.join(', ')} changed`);
    }
    record = await saveRecord(deps, { ...record, dataWebhookId: data.WebhookId, events: options.events });

    const stateEvents = stateEventsOf(data.WebhookId);
    let stateHook = found.state;
    if (stateHook === undefined) {
      stateHook = await deps.crm.createWebhook(context, {
        Name: STATE_WEBHOOK_NAME,
        Events: stateEvents,
        TargetUrl: deps.targetUrl,
        // Its `test` delivery must pass the ingest's signature check like any other.
        Secret: secret,
        State: 'Active',
        Headers: stateHeaders({}, deps.stateEventToken),
      });
      changes.push(`state webhook ${stateHook.WebhookId} created`);
    } else {
      const changed = await changeWebhook(deps, context, stateHook, STATE_WEBHOOK_NAME, (read) => {
        const headers = stateHeaders(read.Headers, deps.stateEventToken);
        return {
          ...(!sameEvents(read.Events, stateEvents) && { Events: stateEvents }),
          ...(!sameHeaders(read.Headers, headers) && { Headers: headers }),
          ...(fresh && { Secret: secret }),
        };
      });
      stateHook = changed.webhook;
      if (changed.changed.length > 0)
        changes.push(`state webhook ${stateHook.WebhookId}: ${changed.changed.join(', ')} changed`);
    }
    for (const duplicate of found.duplicates) {
      await deps.crm.deleteWebhook(context, duplicate.WebhookId);
      changes.push(`duplicate webhook ${duplicate.WebhookId} deleted`);
    }
    const first = record.status !== 'active';
    record = await saveRecord(deps, {
      ...record,
      status: 'active',
      stateWebhookId: stateHook.WebhookId,
      ...fields,
      onboardedAt: record.onboardedAt ?? new Date(nowOf(deps)).toISOString(),
    });
    if (first || changes.length > 0)
      await tenantEvent(deps, 'receiver.tenant.onboarded', {
        context,
        dataWebhookId: data.WebhookId,
        stateWebhookId: stateHook.WebhookId,
        events: options.events.length,
        changes,
      });
    return { record, changes };
  });
}
