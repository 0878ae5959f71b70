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
 * pointed elsewhere meanwhile is no longer the receiver's: left as it is, reported.
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
      if (!(error instanceof CrmApiError) || (error.status !== 409 && error.status !== 412)) throw error;
      if (attempt >= CHANGE_TRIES)
        throw new TenantError(
          `${context}: webhook ${webhook.WebhookId} was changed in the CRM by someone else during each of ${CHANGE_TRIES} tries to set its ${changed.join(', ')}, which are not set: run the command again once nobody is editing it`,
          context,
          'conflict',
        );
      await sleepOf(deps)(500 * attempt);
      webhook = await deps.crm.getWebhook(context, webhook.WebhookId);
    }
  }
}
