import { WEBHOOK_STATE_NAMES } from '../../lib/events/states.js';
import type { CrmCore, WebhookChange } from './crm.js';
import { CrmError } from './errors.js';
import { type CrmAnswer, type CrmRequest, notImplemented, objectBody, ok } from './http.js';
import { type WebhookState, webhookResource } from './webhooks.js';

const STATES: readonly WebhookState[] = WEBHOOK_STATE_NAMES;

/** The fields a PATCH may set, by their REST names. */
const PATCHABLE = ['Name', 'Events', 'TargetUrl', 'Secret', 'State', 'Headers', 'Properties', 'ErrorsEmail'];

/**
 * The tenant's Webhook resource (crm-rest-api.md): list (statusFilter), one, LastError, POST (after the
 * `test` delivery), PATCH (JSON merge patch, or JSON Patch replace/add/test; 409 when a `test` fails,
 * 412 when changed since If-Unmodified-Since; the `test` delivery first when it stays Active), DELETE.
 */
export async function webhookApi(
  core: CrmCore,
  context: string,
  method: string,
  parts: string[],
  request: CrmRequest,
): Promise<CrmAnswer> {
  const data = core.store.context(context);
  const [id, sub] = parts;
  if (id === undefined) {
    if (method === 'GET') {
      const filter = request.query.get('statusFilter');
      if (filter !== null && !STATES.includes(filter as WebhookState))
        throw new CrmError(`statusFilter must be one of ${STATES.join(', ')}`);
      return ok(
        data.webhooks.filter((hook) => filter === null || hook.state === filter).map(webhookResource),
      );
    }
    if (method === 'POST') {
      const body = objectBody(request.body, 'Name, Events, TargetUrl, Secret, Headers, Properties');
      const input = inputOf(body);
      const webhook = await core.register(
        context,
        { ...input, name: input.name ?? '', events: input.events ?? [], targetUrl: input.targetUrl ?? '' },
        true,
      );
      return { status: 201, body: webhookResource(webhook) };
    }
  } else if (/^\d+$/.test(id)) {
    const webhook = core.webhook(context, Number(id));
    if (method === 'GET' && sub === undefined) return ok(webhookResource(webhook));
    if (method === 'GET' && sub === 'LastError') return ok(webhook.lastError);
    if (method === 'DELETE' && sub === undefined) {
      core.remove(context, webhook.id);
      return { status: 204 };
    }
    if (method === 'PATCH' && sub === undefined) {
      const since = request.headers['if-unmodified-since'];
      const change = patchOf(webhookResource(webhook), request.body);
      const changed = await core.update(context, webhook.id, change, {
        ifUnmodifiedSince: typeof since === 'string' ? since : undefined,
      });
      return ok(webhookResource(changed));
    }
  }
  return notImplemented(method, request.path);
}

/** A POST's or PATCH's fields as the core's change (only those present). */
function inputOf(body: Record<string, unknown>): WebhookChange {
  const change: WebhookChange = {};
  if ('Name' in body) change.name = String(body.Name ?? '');
  if ('Events' in body) {
    if (!Array.isArray(body.Events)) throw new CrmError('Events must be a list of event names');
    change.events = body.Events.map(String);
  }
  if ('TargetUrl' in body) change.targetUrl = String(body.TargetUrl ?? '');
  if ('Secret' in body)
    change.secret = typeof body.Secret === 'string' && body.Secret !== '' ? body.Secret : undefined;
  if ('Headers' in body) change.headers = objectBody(body.Headers ?? {}, 'Headers') as Record<string, string>;
  if ('Properties' in body) change.properties = objectBody(body.Properties ?? {}, 'Properties');
  if ('ErrorsEmail' in body)
    change.errorsEmail = typeof body.ErrorsEmail === 'string' ? body.ErrorsEmail : '';
  if ('State' in body) {
    if (body.State !== 'Active' && body.State !== 'Stopped')
      throw new CrmError('State must be Active or Stopped');
    change.state = body.State;
  }
  return change;
}

/**
 * The change a PATCH body asks for: a merge patch object, or JSON Patch operations on top-level fields
 * (`replace`/`add` set one, `test` compares it with the webhook as shown: 409 when it differs; paths
 * as the CRM takes them, any case, the leading slash optional).
 */
function patchOf(shown: Record<string, unknown>, body: unknown): WebhookChange {
  let fields: Record<string, unknown>;
  if (Array.isArray(body)) {
    fields = {};
    for (const operation of body as Array<{ op?: unknown; path?: unknown; value?: unknown }>) {
      // The path is case insensitive and its leading slash optional: "/Events", "events".
      const path = typeof operation.path === 'string' ? operation.path.replace(/^\//, '') : '';
      const field = Object.keys(shown).find((name) => name.toLowerCase() === path.toLowerCase()) ?? path;
      if (!PATCHABLE.includes(field) && operation.op !== 'test')
        throw new CrmError(`a JSON Patch of a webhook sets /${PATCHABLE.join(', /')}`);
      if (operation.op === 'test') {
        if (JSON.stringify(shown[field]) !== JSON.stringify(operation.value))
          throw new CrmError(`the test of /${field} failed: the webhook has another value`, 409);
      } else if (operation.op === 'replace' || operation.op === 'add') fields[field] = operation.value;
      else throw new CrmError('a JSON Patch of a webhook must be test, replace or add operations');
    }
  } else {
    fields = objectBody(body, '{"State": "Active"} or [{"op":"replace","path":"/State","value":"Active"}]');
    const others = Object.keys(fields).filter((field) => !PATCHABLE.includes(field));
    if (others.length > 0) throw new CrmError(`a merge patch of a webhook sets ${PATCHABLE.join(', ')}`);
  }
  return inputOf(fields);
}
