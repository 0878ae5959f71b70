import { CrmApiError, type CrmWebhook, type WebhookFields } from '../crm/index.js';
import { sleepOf, type TenantDeps, TenantError } from './deps.js';
import { describeWebhooks, sameTarget } from './webhooks.js';

/** Tries of one change of a webhook that someone else keeps changing between the read and the write. */
export const CHANGE_TRIES = 3;

/**
 * Changes a webhook of the receiver's, read before, without overwriting what someone changed since:
 * `decide` gives the fields to set from the webhook as read (none: nothing to do), and the PATCH is
 * applied only while the webhook still is as read (`guardedPatch` of lib/crm/webhooks.ts). When the
 * CRM answers 409 (changed since, or another change of it under way) or 412, the webhook is read again
 * and decided again, up to {@link CHANGE_TRIES} times; then a TenantError naming it. A webhook renamed or
 * pointed elsewhere meanwhile is no longer the receiver's: left as it is, reported; one deleted
 * meanwhile (404) is reported as such ({@link readWebhook}).
 */
export async function changeWebhook(
  deps: Pick<TenantDeps, 'crm' | 'targetUrl' | 'sleep'>,
  context: string,
  read: CrmWebhook,
  name: string,
  decide: (webhook: CrmWebhook) => Partial<WebhookFields>,
): Promise<{ webhook: CrmWebhook; changed: string[] }> {
  let webhook = read;
  for (let attempt = 1; ; attempt++) {
    if (webhook.Name !== name || !sameTarget(webhook.TargetUrl, deps.targetUrl))
      throw new TenantError(
        `${context}: webhook ${describeWebhooks([webhook])} was renamed or pointed away from ${deps.targetUrl} in the CRM, so it is no longer the receiver's and was left as it is: run onboard again`,
        context,
        'conflict',
      );
    const patch = decide(webhook);
    const changed = Object.keys(patch);
    if (changed.length === 0) return { webhook, changed };
    try {
      return { webhook: await deps.crm.patchWebhook(context, webhook.WebhookId, patch, webhook), changed };
    } catch (error) {
      if (isStatus(error, 404)) throw deleted(context, webhook.WebhookId, changed);
      if (!isStatus(error, 409) && !isStatus(error, 412)) throw error;
      if (attempt >= CHANGE_TRIES)
        throw new TenantError(
          `${context}: webhook ${webhook.WebhookId} was changed in the CRM by someone else during each of ${CHANGE_TRIES} tries to set its ${changed.join(', ')}, which are not set: run the command again once nobody is editing it`,
          context,
          'conflict',
        );
      await sleepOf(deps)(500 * attempt);
      webhook = await readWebhook(deps, context, webhook.WebhookId, changed);
    }
  }
}

/** The webhook `id` read before setting its `fields`: one deleted in the CRM is a TenantError saying so. */
export async function readWebhook(
  deps: Pick<TenantDeps, 'crm'>,
  context: string,
  id: number,
  fields: string[],
): Promise<CrmWebhook> {
  try {
    return await deps.crm.getWebhook(context, id);
  } catch (error) {
    throw isStatus(error, 404) ? deleted(context, id, fields) : error;
  }
}

function isStatus(error: unknown, status: number): boolean {
  return error instanceof CrmApiError && error.status === status;
}

function deleted(context: string, id: number, fields: string[]): TenantError {
  return new TenantError(
    `${context}: webhook ${id} was deleted in the CRM meanwhile, so nothing was set on it (${fields.join(', ')}): run onboard again to create it again`,
    context,
    'conflict',
  );
}
