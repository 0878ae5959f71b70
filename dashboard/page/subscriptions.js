import { api } from './api.js';
import { bodyBlock, eventLink, h, poll, say, time } from './dom.js';
import { source } from './source.js';

const REFRESH_MS = 5000;

/**
 * Each subscription: its pattern in words, target, counts, recent deliveries and failures, and its
 * DLQ with each event. Where the source cannot see deliveries (AWS), the page says so.
 */
export function mount(container) {
  let shown = '';
  const view = poll(
    REFRESH_MS,
    () => Promise.all([source, api.subscriptions()]),
    ([info, subscriptions]) => {
      const data = JSON.stringify(subscriptions);
      if (data === shown) return;
      shown = data;
      container.replaceChildren(
        h('h2', {}, `Subscriptions (${subscriptions.length})`),
        h('p', { class: 'note' }, info.subscriptionsNote),
        ...(subscriptions.length === 0
          ? [h('p', {}, 'No subscription: subscriptions.yml (or SUBSCRIPTIONS_FILE) lists none.')]
          : subscriptions.map(card)),
      );
    },
    showError,
  );
  return view.stop;
}

function showError(error) {
  say(`Could not load the subscriptions: ${error.message}`);
}

function card(subscription) {
  const { name, inFlight, dlqDepth } = subscription;
  return h(
    'article',
    { class: 'card subscription', 'data-subscription': name, 'aria-labelledby': `subscription-${name}` },
    h('h3', { id: `subscription-${name}` }, name),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Pattern'),
      h(
        'dd',
        {},
        h('ul', { class: 'pattern' }, describe(subscription.pattern)),
        h(
          'details',
          {},
          h('summary', {}, 'As JSON'),
          h('pre', {}, JSON.stringify(subscription.pattern, null, 2)),
        ),
      ),
      h('dt', {}, 'Target'),
      h('dd', { class: 'mono' }, subscription.target),
      h('dt', {}, 'Matched'),
      h('dd', { 'data-count': 'matched' }, subscription.matched),
      h('dt', {}, 'Delivered'),
      h('dd', { 'data-count': 'delivered' }, subscription.delivered),
      h('dt', {}, 'In flight'),
      h('dd', { 'data-count': 'inFlight' }, inFlight ?? 'not observable here'),
      h('dt', {}, 'Failed'),
      h('dd', { 'data-count': 'failed' }, subscription.failed === 0 ? '0' : `✖ ${subscription.failed}`),
      h('dt', {}, 'Dead-letter queue'),
      h(
        'dd',
        { 'data-count': 'dlq', class: dlqDepth === 0 ? undefined : 'error' },
        dlqDepth === 0 ? '✔ empty' : `⚠ ${dlqDepth} waiting`,
      ),
    ),
    subscription.recent && deliveries(subscription.recent),
    subscription.failures && failures(subscription.failures),
    subscription.dlq && deadLetters(subscription.dlq),
  );
}

/** A pattern as one line per field: `detail.significantChanges: department or name`. */
function describe(pattern, path = []) {
  return Object.entries(pattern).flatMap(([key, value]) => {
    if (key === '$or')
      return h(
        'li',
        {},
        `${path.join('.') || 'the event'} matches any of:`,
        h(
          'ol',
          {},
          value.map((branch) => h('li', {}, h('ul', {}, describe(branch, path)))),
        ),
      );
    if (!Array.isArray(value)) return describe(value, [...path, key]);
    return h(
      'li',
      {},
      h('span', { class: 'mono' }, [...path, key].join('.')),
      ': ',
      value.map(condition).join(' or '),
    );
  });
}

/** An alternative of a pattern array: a value, or an operator such as `prefix "Cust"`. */
function condition(value) {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  return Object.entries(value)
    .map(([operator, operand]) => `${operator} ${JSON.stringify(operand)}`)
    .join(', ');
}

function table(caption, headings, rows) {
  return h(
    'table',
    {},
    h('caption', {}, caption),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        headings.map((text) => h('th', { scope: 'col' }, text)),
      ),
    ),
    h('tbody', {}, rows),
  );
}

/** An event's EventId, linked; a receiver lifecycle event (no EventId) by its context. */
function eventOf(delivery) {
  if (!delivery.eventId && delivery.context) return `${delivery.context} (receiver event)`;
  return eventLink(delivery.eventId);
}

function deliveries(recent) {
  if (recent.length === 0) return h('p', { class: 'recent' }, 'No delivery yet.');
  return table(
    `Recent deliveries (${recent.length})`,
    ['Time', 'EventId', 'detail-type', 'Attempts', 'Status'],
    recent.map((delivery) =>
      h(
        'tr',
        { 'data-delivery': delivery.id },
        h('td', {}, time(delivery.at)),
        h('td', {}, eventOf(delivery)),
        h('td', {}, delivery.detailType),
        h('td', {}, delivery.attempts),
        h('td', { class: 'outcome applied' }, '✔ delivered'),
      ),
    ),
  );
}

function failures(list) {
  if (list.length === 0) return h('p', {}, 'No failed attempt.');
  return table(
    `Failed attempts (${list.length})`,
    ['Time', 'EventId', 'Attempt', 'Error'],
    list.map((failure) =>
      h(
        'tr',
        { 'data-failure': failure.id },
        h('td', {}, time(failure.at)),
        h('td', {}, eventOf(failure)),
        h('td', {}, failure.attempt),
        h('td', { class: 'error' }, `✖ ${failure.error}`),
      ),
    ),
  );
}

function deadLetters(dlq) {
  if (dlq.length === 0) return h('p', {}, 'Nothing in the dead-letter queue.');
  return table(
    `Dead-letter queue (${dlq.length})`,
    ['Time', 'EventId', 'detail-type', 'Attempts', 'Error', 'Event'],
    dlq.map((letter) =>
      h(
        'tr',
        { 'data-dead-letter': letter.id },
        h('td', {}, time(letter.at)),
        h('td', {}, eventOf(letter)),
        h('td', {}, letter.detailType),
        h('td', {}, letter.attempts),
        h('td', { class: 'error' }, `⚠ dead-lettered: ${letter.error}`),
        h('td', {}, h('details', {}, h('summary', {}, 'Event'), bodyBlock(letter.event))),
      ),
    ),
  );
}
