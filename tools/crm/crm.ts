import { type Applied, applyChange, type Change } from './changes.js';
import type { Dispatcher } from './deliver.js';
import { CrmError } from './errors.js';
import type { ContextData, CrmStore } from './store.js';
import { tableOf } from './tables.js';
import { newWebhook, type Webhook, type WebhookInput, type WebhookState } from './webhooks.js';

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
}

export function createCrmCore(store: CrmStore, dispatcher: Dispatcher): CrmCore {
  // A state change in progress per webhook: the same request twice at once shares it (one test delivery).
  const changing = new Map<string, { state: WebhookState; done: Promise<Webhook> }>();
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
  };
  return core;
}
