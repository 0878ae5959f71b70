import { api } from './api.js';
import { confirmed, h, poll, say, time } from './dom.js';

/**
 * The tenants (`GET /tenants`): each context with its status, its state in the CRM, its two webhooks,
 * how many Events, its last delivery and reconcile, the age of its secret and the replaced ones still
 * accepted; and the actions: onboard a context, rotate a tenant's secret, offboard it (each a request
 * with the page token).
 */
export function mount(container) {
  const list = h('div', {}, h('p', {}, 'Loading…'));
  const context = h('input', {
    name: 'context',
    required: true,
    placeholder: 'Cust12345',
    'aria-label': 'ContextIdentifier',
  });
  const events = h('input', { name: 'events', placeholder: 'all of ENTITIES', 'aria-label': 'Events' });
  const form = h(
    'form',
    { class: 'onboard', onsubmit: (event) => onboard(event, context, events, refresh) },
    h('label', {}, 'Context ', context),
    h('label', {}, ' Events ', events),
    ' ',
    h('button', { type: 'submit' }, 'Onboard'),
  );
  container.replaceChildren(h('h2', {}, 'Tenants'), form, list);
  const { run: refresh, stop } = poll(
    15_000,
    () => api.tenants(),
    (tenants) => list.replaceChildren(table(tenants, refresh)),
    (error) => list.replaceChildren(h('p', {}, `Could not read the tenants: ${error.message}`)),
  );
  return stop;
}

function table(tenants, refresh) {
  if (tenants.length === 0) return h('p', {}, 'No tenant onboarded yet.');
  return h(
    'table',
    { class: 'tenants' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ...['Context', 'Status', 'In the CRM', 'Webhooks', 'Events', 'Last delivery', 'Secret', ''].map(
          (title) => h('th', {}, title),
        ),
      ),
    ),
    h(
      'tbody',
      {},
      tenants.map((tenant) =>
        h(
          'tr',
          { 'data-context': tenant.context },
          h('td', {}, tenant.context),
          h('td', {}, tenant.status),
          h(
            'td',
            {},
            tenant.tenantState ?? '?',
            tenant.proposal ? h('p', { class: 'note' }, tenant.proposal) : '',
          ),
          h(
            'td',
            {},
            tenant.dataWebhookId ? `${tenant.dataWebhookId} (state ${tenant.stateWebhookId ?? '?'})` : '–',
            ...(tenant.webhooks ?? []).map((webhook) =>
              h('p', { class: 'note' }, `${webhook.webhookId} ${webhook.state} since `, time(webhook.since)),
            ),
          ),
          h('td', {}, String(tenant.events?.length ?? 0)),
          h(
            'td',
            {},
            tenant.lastDelivery ? time(tenant.lastDelivery) : '–',
            tenant.lastReconcile
              ? h(
                  'p',
                  { class: 'note' },
                  `last reconcile ${tenant.lastReconcile.status} `,
                  time(tenant.lastReconcile.at),
                )
              : '',
          ),
          h(
            'td',
            {},
            age(tenant.secretAgeSeconds),
            ...tenant.retiring.map((at) =>
              h('p', { class: 'note' }, 'a replaced one accepted until ', time(at)),
            ),
          ),
          h(
            'td',
            {},
            tenant.status === 'offboarded'
              ? ''
              : [
                  h(
                    'button',
                    { type: 'button', class: 'rotate', onclick: () => act(tenant, 'rotate', refresh) },
                    'Rotate secret',
                  ),
                  ' ',
                  h(
                    'button',
                    { type: 'button', class: 'offboard', onclick: () => act(tenant, 'offboard', refresh) },
                    'Offboard',
                  ),
                ],
          ),
        ),
      ),
    ),
  );
}

/** The secret's age in the unit that reads best. */
function age(seconds) {
  if (seconds === undefined) return '–';
  if (seconds < 3600) return `${Math.round(seconds / 60)} min old`;
  if (seconds < 2 * 86_400) return `${Math.round(seconds / 3600)} h old`;
  return `${Math.round(seconds / 86_400)} days old`;
}

async function onboard(event, context, events, refresh) {
  event.preventDefault();
  const name = context.value.trim();
  say(`Onboarding ${name} (its webhooks are saved once the CRM's test delivery is answered)…`);
  try {
    const result = await api.onboard(name, events.value.trim());
    say(`${name} onboarded: ${result.changes.join(', ') || 'nothing to change'}.`);
    refresh();
  } catch (error) {
    say(`✖ Onboarding ${name} failed: ${error.message}`);
  }
}

const ACTIONS = {
  rotate: {
    title: (c) => `Rotate the secret of ${c}?`,
    text: 'A new secret is accepted first, then set on its webhooks; the old one stays accepted 15 minutes.',
    run: (c) => api.rotateSecret(c),
  },
  offboard: {
    title: (c) => `Offboard ${c}?`,
    text: 'Its webhooks are deleted in the CRM; deliveries are refused once its secrets retire (15 minutes).',
    run: (c) => api.offboard(c),
  },
};

async function act(tenant, action, refresh) {
  const { title, text, run } = ACTIONS[action];
  if (!(await confirmed(title(tenant.context), text, action === 'rotate' ? 'Rotate' : 'Offboard'))) return;
  say(`${action === 'rotate' ? 'Rotating the secret of' : 'Offboarding'} ${tenant.context}…`);
  try {
    await run(tenant.context);
    say(`${tenant.context}: done.`);
    refresh();
  } catch (error) {
    say(`✖ ${tenant.context}: ${error.message}`);
  }
}
