import { describe, expect, it } from 'vitest';
import { CrmApiError, CrmRetryLater, type CrmWebhook } from '../../lib/crm/index.js';
import { runScope, type ScopeDeps } from '../../lib/reconcile/run/scope.js';
import { request } from './support.js';

/** The CRM's webhooks of the context (or its refusal), the receiver's stored rows by entity, and ENTITIES. */
function depsOf(options: {
  webhooks: CrmWebhook[] | Error;
  stored: Record<string, Record<string, unknown>>;
  stores?: (entity: string) => boolean;
}): ScopeDeps {
  return {
    crm: {
      async listWebhooks() {
        if (options.webhooks instanceof Error) throw options.webhooks;
        return options.webhooks;
      },
    },
    stored: {
      hasAny: async (_context, entity) => Object.hasOwn(options.stored, entity),
      sampleFieldValues: async (_context, entity) => options.stored[entity],
    },
    stores: options.stores ?? (() => true),
  };
}

const webhook = (events: string[]): CrmWebhook => ({
  WebhookId: 1,
  Name: 'receiver',
  Events: events,
  TargetUrl: 'https://receiver.example/webhook',
  State: 'Active',
});

const HELD = { contact: {}, ticket: {}, 'list.category': { Id: 1, Name: 'Customer' } };

describe('the entities a run without entities= covers', () => {
  it('those the context’s webhooks in the CRM name, which ENTITIES stores: nothing else is asked', async () => {
    const deps = depsOf({
      webhooks: [
        webhook(['contact.created', 'contact.changed', 'sale.created', 'webhook1.errors']),
        webhook(['person.changed', 'list.category.created', 'quote.approved']),
      ],
      stored: HELD,
      stores: (entity) => entity !== 'sale',
    });
    expect(await runScope(request('Cust1', { full: true }), deps, new Map())).toEqual({
      entities: ['contact', 'person', 'list.category'],
      notReconciled: { quote: 'its events carry no FieldValues: nothing to compare' },
      scopeFrom: 'webhooks',
    });
  });

  it('no webhook in the CRM: the fixed entities the receiver holds rows of for the context, and the lists and tables said unknown (a list held is not left out silently)', async () => {
    const deps = depsOf({ webhooks: [], stored: HELD });
    const why =
      'the CRM lists no webhook of the context: lists and custom tables unknown; name them in entities';
    expect(await runScope(request('Cust1', { full: true }), deps, new Map())).toEqual({
      entities: ['contact', 'ticket'],
      notReconciled: { 'list.*': why, 'y_*': why },
      scopeFrom: 'stored rows',
    });
  });

  it('the webhook API refused (404): the entities held, and the lists and tables said unknown', async () => {
    const refused = new CrmApiError('GET /Cust1/api/v1/Webhook answered HTTP 404', 'Cust1', { status: 404 });
    const scope = await runScope(
      request('Cust1', { full: true }),
      depsOf({ webhooks: refused, stored: HELD }),
      new Map(),
    );
    const why =
      'the CRM refused the webhook listing (HTTP 404): lists and custom tables unknown; name them in entities';
    expect(scope).toEqual({
      entities: ['contact', 'ticket'],
      notReconciled: { 'list.*': why, 'y_*': why },
      scopeFrom: 'stored rows',
    });
  });

  it('a CRM that throttles the listing is asked again later (the run carries on), not guessed around', async () => {
    const later = new CrmRetryLater('GET /Cust1/api/v1/Webhook: HTTP 429', 'Cust1', 'throttled', 1000, {
      status: 429,
    });
    await expect(
      runScope(request('Cust1', { full: true }), depsOf({ webhooks: later, stored: HELD }), new Map()),
    ).rejects.toBe(later);
  });

  it('the request’s entities, when it names them', async () => {
    const deps = depsOf({ webhooks: [webhook(['contact.created'])], stored: HELD });
    expect(await runScope(request('Cust1', { full: true, entities: ['ticket'] }), deps, new Map())).toEqual({
      entities: ['ticket'],
      notReconciled: {},
      scopeFrom: 'request',
    });
  });
});
