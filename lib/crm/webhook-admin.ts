import type { WebhookStateName } from '../events/states.js';
import { parseAnswer } from './answer.js';
import type { CallRequest } from './call.js';
import { CrmApiError } from './errors.js';
import type { CrmResponse } from './http.js';
import { type CrmWebhook, CrmWebhookSchema, guardedPatch } from './webhooks.js';

/** What a webhook is created with (crm-rest-api.md, "Creating, changing and deleting webhooks"). */
export interface WebhookFields {
  Name: string;
  Events: string[];
  TargetUrl: string;
  Secret?: string;
  State?: Exclude<WebhookStateName, 'TooManyErrors'>;
  Type?: 'webhook';
  Headers?: Record<string, string>;
  Properties?: Record<string, unknown>;
  ErrorsEmail?: string;
}

interface Deps {
  base: (context: string) => string;
  call: (context: string, url: URL, request?: CallRequest) => Promise<CrmResponse>;
  okJson: (response: CrmResponse, context: string, what: string) => unknown;
}

/**
 * Creating, changing and deleting a tenant's webhooks. A secret sent is never in an error: the CRM's
 * reason is quoted with it blanked out.
 */
export function createWebhookAdmin({ base, call, okJson }: Deps) {
  const url = (context: string, path = '') => new URL(`${base(context)}/Webhook${path}`);
  const send = async (context: string, target: URL, request: CallRequest, secret?: string) => {
    const what = `${request.method} ${target.pathname}`;
    const response = await call(context, target, request);
    try {
      // A create answers 201 (or 200), a delete 204 (or 200); the body checks are the same.
      const ok = response.status === 201 || response.status === 204 ? { ...response, status: 200 } : response;
      return response.status === 204 ? undefined : okJson(ok, context, what);
    } catch (error) {
      if (!(error instanceof CrmApiError) || !secret) throw error;
      throw new CrmApiError(error.message.replaceAll(secret, '[secret]'), context, { status: error.status });
    }
  };
  const parse = (context: string, body: unknown, what: string): CrmWebhook =>
    parseAnswer(CrmWebhookSchema, body, context, what, 'a webhook');

  return {
    /** `POST /Webhook`: the CRM first posts its `test` delivery to TargetUrl and refuses unless answered 200. */
    async createWebhook(context: string, fields: WebhookFields): Promise<CrmWebhook> {
      const target = url(context);
      const body = await send(
        context,
        target,
        { method: 'POST', body: { Type: 'webhook', ...fields } },
        fields.Secret,
      );
      return parse(context, body, `POST ${target.pathname}`);
    },
    /**
     * `PATCH /Webhook/{id}`. With the webhook as `read`, a JSON Patch that first tests what the change
     * was decided on (see {@link guardedPatch}): 409 when someone changed it since. Without, a JSON
     * merge patch. A change that leaves it Active is saved only after the `test` delivery got 200.
     */
    async patchWebhook(
      context: string,
      id: number,
      patch: Partial<WebhookFields>,
      read?: CrmWebhook,
    ): Promise<CrmWebhook> {
      const target = url(context, `/${id}`);
      const body = read ? guardedPatch(patch, read) : patch;
      return parse(
        context,
        await send(context, target, { method: 'PATCH', body }, patch.Secret),
        `PATCH ${target.pathname}`,
      );
    },
    /** `DELETE /Webhook/{id}`: `gone` when it was not there (deleted before, by a person or a run). */
    async deleteWebhook(context: string, id: number): Promise<'deleted' | 'gone'> {
      const target = url(context, `/${id}`);
      const response = await call(context, target, { method: 'DELETE' });
      if (response.status === 404) return 'gone';
      if (response.status !== 200 && response.status !== 204)
        okJson(response, context, `DELETE ${target.pathname}`);
      return 'deleted';
    },
  };
}
