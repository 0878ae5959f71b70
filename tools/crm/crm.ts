import { type Applied, applyChange, type Change } from './changes.js';
import type { Dispatcher } from './deliver.js';
import { CrmError } from './errors.js';
import type { ContextData, CrmStore } from './store.js';
import { crmTime, NEVER, tableOf } from './tables.js';
import { newWebhook, type Webhook, type WebhookInput, type WebhookState } from './webhooks.js';

/** What a PATCH changes: the fields given, `secret: undefined` removes the secret. */
export type WebhookChange = Partial<Omit<WebhookInput, 'associateId'>> & { state?: 'Active' | 'Stopped' };

/** The simulated CRM's operations on rows and webhooks, each persisted before it returns. */
export interface CrmCore {
  readonly store: CrmStore;
  readonly dispatcher: Dispatcher;
  /** Applies a change, saves the context, and starts delivering the event it raised (if any). */
  change(context: string, change: Change, associateId?: number, now?: Date): Applied & { webhooks: number };
  /**
   * Registers a webhook. With `check` (the REST API's way) the target must first answer the `test`
   * delivery with 200, as the CRM checks before it saves.
   */
  register(context: string, input: WebhookInput, check?: boolean): Promise<Webhook>;
  webhook(context: string, id: number): Webhook;
  /** Sets a webhook's state; to Active only after the `test` delivery was answered 200. */
  setState(context: string, id: number, state: WebhookState, associateId?: number): Promise<Webhook>;
  /**
   * Changes a webhook as a PATCH does: 412 when it changed after `ifUnmodifiedSince` (an HTTP date),
   * 409 while another change of it is under way; when it is (or becomes) Active, the target must
   * first answer the `test` delivery (with the new secret, URL and headers) with 200.
   */
  update(
    context: string,
    id: number,
    change: WebhookChange,
    options?: { ifUnmodifiedSince?: string | undefined; associateId?: number },
  ): Promise<Webhook>;
  /** Deletes a webhook for good. */
  remove(context: string, id: number): void;
}

export function createCrmCore(store: CrmStore, dispatcher: Dispatcher): CrmCore {
  // A state change in progress per webhook: the same request twice at once shares it (one test delivery).
  const changing = new Map<string, { state: WebhookState; done: Promise<Webhook> }>();
  const updating = new Set<string>();
  const save = (data: ContextData) => store.save(data.name);
  const checkTarget = async (data: ContextData, target: Parameters<Dispatcher['test']>[1]) => {
    const status = await dispatcher.test(data, target);
    if (status !== 200)
      throw new CrmError(
        `the target URL ${target.targetUrl} answered the test delivery with ${status === 0 ? 'no answer' : status}, not 200`,
        400,
      );
  };
  const core: CrmCore = {
    store,
    dispatcher,
    change(context, change, associateId = 5, now = new Date()) {
      const data = store.context(context);
      const table = tableOf(change.table).name;
      data.rows[table] ??= {};
      const rows = data.rows[table];
      const nextId = () => {
        let id = data.nextId[table] ?? 1;
        while (rows[id] !== undefined) id++;
        data.nextId[table] = id + 1;
        return id;
      };
      const applied = applyChange(rows, change, { now, associateId, nextId });
      save(data);
      const webhooks = applied.event ? dispatcher.publish(data, applied.event, associateId, now) : 0;
      return { ...applied, webhooks };
    },
    async register(context, input, check = false) {
      const data = store.context(context);
      if (!/^https?:\/\//.test(input.targetUrl))
        throw new CrmError(`TargetUrl ${JSON.stringify(input.targetUrl)} must be an http(s) URL`);
      if (input.events.length === 0) throw new CrmError('Events must name at least one event');
      if (check) await checkTarget(data, { ...input, headers: input.headers ?? {} });
      const webhook = newWebhook(data.nextWebhookId++, input);
      data.webhooks.push(webhook);
      save(data);
      return webhook;
    },
    webhook(context, id) {
      const webhook = store.context(context).webhooks.find((candidate) => candidate.id === id);
      if (webhook === undefined) throw new CrmError(`no webhook ${id} in ${context}`, 404);
      return webhook;
    },
    async setState(context, id, state, associateId = 5) {
      const data = store.context(context);
      const webhook = core.webhook(context, id);
      const key = `${context}/${id}`;
      const pending = changing.get(key);
      if (pending?.state === state) return pending.done;
      if (pending) throw new CrmError(`webhook ${id} is being set to ${pending.state}: try again`, 409);
      const done = (async () => {
        if (state === 'Active') await checkTarget(data, webhook);
        dispatcher.setState(data, webhook, state, associateId);
        return webhook;
      })().finally(() => changing.delete(key));
      changing.set(key, { state, done });
      return done;
    },
    async update(context, id, change, options = {}) {
      const data = store.context(context);
      const webhook = core.webhook(context, id);
      const key = `${context}/${id}`;
      if (updating.has(key) || changing.has(key))
        throw new CrmError(`webhook ${id} is being changed by another request: try again`, 409);
      const since = Date.parse(options.ifUnmodifiedSince ?? '');
      const last = Date.parse(`${webhook.updated === NEVER ? webhook.registered : webhook.updated}Z`);
      if (Number.isFinite(since) && Math.floor(last / 1000) * 1000 > since)
        throw new CrmError(`webhook ${id} changed since ${options.ifUnmodifiedSince}`, 412);
      const { state, ...fields } = change;
      if (fields.events !== undefined && fields.events.length === 0)
        throw new CrmError('Events must name at least one event');
      if (fields.targetUrl !== undefined && !/^https?:\/\//.test(fields.targetUrl))
        throw new CrmError(`TargetUrl ${JSON.stringify(fields.targetUrl)} must be an http(s) URL`);
      const next: Webhook = { ...webhook, ...fields, events: [...(fields.events ?? webhook.events)] };
      if ('secret' in change && change.secret === undefined) delete next.secret;
      updating.add(key);
      try {
        if ((state ?? webhook.state) === 'Active') await checkTarget(data, next);
        const { state: _, ...changed } = next;
        Object.assign(webhook, changed, {
          updated: crmTime(),
          updatedAssociateId: options.associateId ?? 5,
        });
        if (!('secret' in next)) delete webhook.secret;
        if (state !== undefined && state !== webhook.state)
          dispatcher.setState(data, webhook, state, options.associateId ?? 5);
        save(data);
        return webhook;
      } finally {
        updating.delete(key);
      }
    },
    remove(context, id) {
      const data = store.context(context);
      core.webhook(context, id);
      data.webhooks = data.webhooks.filter((webhook) => webhook.id !== id);
      save(data);
    },
  };
  return core;
}
