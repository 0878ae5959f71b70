import * as z from 'zod/mini';
import { WEBHOOK_STATE_NAMES, type WebhookStateName } from '../events/states.js';
import { parseAnswer } from './answer.js';
import type { CallRequest } from './call.js';
import type { CrmResponse } from './http.js';

/** A webhook's state by name, as the REST API writes it (not the state events' numbers). */
export const WEBHOOK_STATES = WEBHOOK_STATE_NAMES;
export type CrmWebhookState = WebhookStateName;

/** `GET /api/v1/Webhook/{id}`: the fields the receiver uses; the rest is kept as the CRM sent it. */
export const CrmWebhookSchema = z.looseObject({
  WebhookId: z.number(),
  Name: z.string(),
  Events: z.array(z.string()),
  TargetUrl: z.string(),
  State: z.string(),
  UpdatedAssociate: z.optional(z.nullable(z.looseObject({ AssociateId: z.optional(z.number()) }))),
});
export type CrmWebhook = z.infer<typeof CrmWebhookSchema>;

/** A webhook's usage counters (the dynamic provider's `webhook_usage`), which show failures the receiver never saw. */
export interface WebhookUsage {
  totalCalls: number;
  totalErrors: number;
  consecutiveErrors: number;
  lastError: string;
}

/**
 * The archive's page of `webhook_usage` rows: null, no rows or a row that is no object are no counters
 * (the state is still watched); its counters are checked where read.
 */
const UsageAnswerSchema = z.nullable(z.looseObject({ value: z.optional(z.array(z.unknown())) }));
const UsageRowSchema = z.record(z.string(), z.unknown());

interface Deps {
  base: (context: string) => string;
  getJson: (
    context: string,
    url: URL,
    request?: CallRequest,
  ) => Promise<{ body: unknown; response: CrmResponse }>;
  /** Removes credentials from the CRM's text (lib/crm/scrub.ts): a last error may echo a request. */
  scrub: (text: string) => string;
}

/** The Webhook resource of a tenant: list by state, one, LastError, usage counters, and set Active. */
export function createWebhookApi({ base, getJson, scrub }: Deps) {
  const parse = (context: string, body: unknown, what: string): CrmWebhook =>
    parseAnswer(CrmWebhookSchema, body, context, what, 'a webhook');
  const url = (context: string, path = '') => new URL(`${base(context)}/Webhook${path}`);

  return {
    /** `GET /Webhook[?statusFilter=]`: the tenant's webhooks, all or those in one state. */
    async listWebhooks(context: string, statusFilter?: CrmWebhookState): Promise<CrmWebhook[]> {
      const target = url(context);
      if (statusFilter) target.searchParams.set('statusFilter', statusFilter);
      const what = `GET ${target.pathname}`;
      const list = parseAnswer(
        z.array(z.unknown()),
        (await getJson(context, target)).body,
        context,
        what,
        'a list',
      );
      return list.map((item) => parse(context, item, what));
    },
    async getWebhook(context: string, id: number): Promise<CrmWebhook> {
      const target = url(context, `/${id}`);
      return parse(context, (await getJson(context, target)).body, `GET ${target.pathname}`);
    },
    /** `GET /Webhook/{id}/LastError`: the last delivery error the CRM recorded ('' when none). */
    async webhookLastError(context: string, id: number): Promise<string> {
      const { body } = await getJson(context, url(context, `/${id}/LastError`));
      return scrub(typeof body === 'string' ? body : body === null ? '' : JSON.stringify(body));
    },
    /** The usage counters of a webhook, or undefined when the CRM lists none for it. */
    async webhookUsage(context: string, id: number): Promise<WebhookUsage | undefined> {
      const target = new URL(`${base(context)}/archive/dynamic`);
      const fields = ['webhook_usage_id', 'total_calls', 'total_errors', 'consecutive_errors', 'last_error'];
      target.searchParams.set('$select', fields.map((field) => `webhook_usage.${field}`).join(','));
      target.searchParams.set('$filter', `webhook_usage.webhook_usage_id eq ${id}`);
      const { body } = await getJson(context, target);
      const what = `GET ${target.pathname}`;
      const answer = parseAnswer(UsageAnswerSchema, body, context, what, 'a page of usage rows');
      const first = z.safeParse(UsageRowSchema, answer?.value?.[0]);
      if (!first.success) return undefined;
      const row = first.data;
      const [totalCalls, totalErrors, consecutiveErrors] = [
        'total_calls',
        'total_errors',
        'consecutive_errors',
      ]
        .map((name) => Number(row[`webhook_usage.${name}`] ?? 0))
        .map((count) => (Number.isSafeInteger(count) && count >= 0 ? count : undefined));
      // Counters that are no counts are none (the state is still watched), never NaN in the memory.
      if (totalCalls === undefined || totalErrors === undefined || consecutiveErrors === undefined)
        return undefined;
      return {
        totalCalls,
        totalErrors,
        consecutiveErrors,
        lastError: scrub(String(row['webhook_usage.last_error'] ?? '')),
      };
    },
    /**
     * `PATCH /Webhook/{id}` setting State Active: the CRM first posts its `test` delivery to the target
     * and refuses (a CrmApiError with its reason) unless it was answered 200. With the webhook as
     * `read`, only while it still is (its State above all: 409 when a person stopped it since).
     */
    async activateWebhook(context: string, id: number, read?: CrmWebhook): Promise<CrmWebhook> {
      const target = url(context, `/${id}`);
      const change = { State: 'Active' };
      const body = read ? guardedPatch(change, read) : change;
      const { body: answer } = await getJson(context, target, { method: 'PATCH', body });
      return parse(context, answer, `PATCH ${target.pathname}`);
    },
  };
}

/** The fields that make a webhook the one a change was decided for, whatever the change sets. */
const IDENTITY = ['Name', 'TargetUrl'];

/**
 * A change as a JSON Patch (RFC 6902) that the CRM applies only while the webhook still has, as `read`,
 * its Name and TargetUrl and the value of each field the change sets (`test` operations: 409 when one
 * differs), so a change someone made between the read and the write is never overwritten unseen.
 * Values are compared whole, to the character; If-Unmodified-Since would compare `Updated` to the
 * second, letting a change within the same second through. Secret is never tested (a secret is only
 * ever sent as a value to set) and a field the CRM did not send is not tested.
 */
export function guardedPatch(patch: Record<string, unknown>, read: CrmWebhook): JsonPatchOperation[] {
  const fields = [...new Set([...IDENTITY, ...Object.keys(patch)])];
  const shown: Record<string, unknown> = read;
  return [
    ...fields
      .filter((field) => field !== 'Secret' && shown[field] !== undefined)
      .map((field) => ({ op: 'test' as const, path: `/${field}`, value: shown[field] })),
    ...Object.entries(patch).map(([field, value]) => ({ op: 'replace' as const, path: `/${field}`, value })),
  ];
}

export interface JsonPatchOperation {
  op: 'test' | 'replace';
  path: string;
  value: unknown;
}
