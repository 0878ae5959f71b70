import { api } from './api.js';
import { outcomeChart } from './chart.js';
import { confirmed, eventLink, h, poll, say, time } from './dom.js';
import { gapList, reactivatedOutsideGaps } from './gaps.js';

/** How the page draws each state beside its name (the names come from the server: GET /source). */
const STATE_ICONS = { Active: '✔', Stopped: '■', TooManyErrors: '✖' };
const stateLabel = (name) => `${STATE_ICONS[name] ?? '?'} ${name}`;
const REFRESH_MS = 5000;
/** Webhooks per page: a stage can serve thousands of tenants. */
export const PAGE_SIZE = 20;
/** The list's filter by state: a state's name, `open-gap`, or '' for every webhook. */
const OPEN_GAP = 'open-gap';

/**
 * Webhooks counted by state and open gap, then listed filtered by state and context and paged; the
 * queues with a redrive per DLQ; the chart. The filter stays as chosen while the data refreshes.
 */
export function mount(container) {
  let shown = '';
  let states = [];
  let webhooks = [];
  let gaps = [];
  const filter = { state: '', context: '', page: 0 };
  const counts = h('ul', { class: 'counts', 'aria-label': 'Webhooks by state' });
  const list = h('div', { id: 'webhook-list', 'aria-live': 'polite' });
  const rest = h('div');
  const choose = (changes) => {
    Object.assign(filter, { page: 0 }, changes);
    stateSelect.value = filter.state;
    draw();
  };
  const stateSelect = h('select', {
    id: 'webhook-state',
    onchange: () => choose({ state: stateSelect.value }),
  });
  const stateOptions = () => {
    stateSelect.replaceChildren(
      h('option', { value: '' }, 'Every state'),
      ...states.map((name) => h('option', { value: name }, name)),
      h('option', { value: OPEN_GAP }, 'With an open gap'),
    );
    stateSelect.value = filter.state;
  };
  stateOptions();
  const contextInput = h('input', {
    id: 'webhook-context',
    type: 'search',
    autocomplete: 'off',
    oninput: () => choose({ context: contextInput.value.trim() }),
  });
  const draw = () => {
    counts.replaceChildren(...stateCounts(states, webhooks, gaps, choose));
    list.replaceChildren(...webhookList(webhooks, gaps, filter, draw));
  };
  container.replaceChildren(
    h('h2', {}, 'Overview'),
    h(
      'section',
      { 'aria-labelledby': 'webhooks-title' },
      h('h3', { id: 'webhooks-title' }, 'Webhooks'),
      counts,
      h(
        'form',
        { class: 'filters', role: 'search', onsubmit: (event) => event.preventDefault() },
        h('label', { for: 'webhook-state' }, 'State'),
        stateSelect,
        h('label', { for: 'webhook-context' }, 'Context'),
        contextInput,
      ),
      list,
    ),
    rest,
  );
  const view = poll(
    REFRESH_MS,
    // The states' names until known (GET /source), then only the data.
    () =>
      Promise.all([
        states.length === 0 ? api.source() : undefined,
        api.webhooks(),
        api.gaps(),
        api.queues(),
        api.outcomes(),
      ]),
    ([info, nextWebhooks, nextGaps, queues, outcomes]) => {
      const data = JSON.stringify([nextWebhooks, nextGaps, queues, outcomes]);
      // Redraw only on change, and never under an open confirmation.
      if (data === shown || document.getElementById('confirm').open) return;
      shown = data;
      if (info !== undefined) {
        states = info.webhookStates;
        stateOptions();
      }
      webhooks = nextWebhooks;
      gaps = nextGaps;
      draw();
      rest.replaceChildren(
        queueSection(queues, view.run),
        h(
          'section',
          { 'aria-labelledby': 'chart-title' },
          h('h3', { id: 'chart-title' }, 'Events per minute, last hour'),
          outcomeChart(outcomes),
        ),
      );
    },
    showError,
  );
  return view.stop;
}

function showError(error) {
  say(`Could not load the overview: ${error.message}`);
}

const gapsOf = (webhook, gaps) =>
  gaps.filter((gap) => gap.context === webhook.context && gap.webhookId === webhook.webhookId);
const hasOpenGap = (webhook, gaps) => gapsOf(webhook, gaps).some((gap) => !gap.closedAt);

/** One button per state and one for open gaps, with its count; a click filters the list by it. */
function stateCounts(states, webhooks, gaps, choose) {
  const count = (test) => webhooks.filter(test).length;
  const entries = [
    ...states.map((name) => [name, stateLabel(name), count((w) => w.stateName === name)]),
    [OPEN_GAP, '⚠ Open gaps', count((w) => hasOpenGap(w, gaps))],
  ];
  return entries.map(([state, label, n]) =>
    h(
      'li',
      { 'data-count': state },
      h(
        'button',
        { type: 'button', class: 'count', onclick: () => choose({ state }) },
        label,
        ' ',
        h('strong', {}, n),
      ),
    ),
  );
}

/** The webhooks the filter keeps, one page of them, and the pager. */
function webhookList(webhooks, gaps, filter, draw) {
  if (webhooks.length === 0) return [h('p', {}, 'No webhook state event received yet.')];
  const context = filter.context.toLowerCase();
  const kept = webhooks.filter(
    (webhook) =>
      (filter.state === '' ||
        (filter.state === OPEN_GAP ? hasOpenGap(webhook, gaps) : webhook.stateName === filter.state)) &&
      webhook.context.toLowerCase().includes(context),
  );
  if (kept.length === 0) return [h('p', {}, `None of the ${webhooks.length} webhooks matches.`)];
  const pages = Math.ceil(kept.length / PAGE_SIZE);
  const page = Math.min(filter.page, pages - 1);
  const first = page * PAGE_SIZE;
  const turn = (to) => () => {
    filter.page = to;
    draw();
  };
  return [
    ...kept.slice(first, first + PAGE_SIZE).map((webhook) => webhookCard(webhook, gapsOf(webhook, gaps))),
    h(
      'nav',
      { class: 'pager', 'aria-label': 'Webhook pages' },
      h('button', { type: 'button', disabled: page === 0, onclick: turn(page - 1) }, 'Previous'),
      h('span', {}, ` ${first + 1}–${Math.min(first + PAGE_SIZE, kept.length)} of ${kept.length} `),
      h('button', { type: 'button', disabled: page >= pages - 1, onclick: turn(page + 1) }, 'Next'),
    ),
  ];
}

function webhookCard(webhook, gaps) {
  const name = webhook.stateName;
  return h(
    'article',
    { class: 'card webhook', 'data-webhook': `${webhook.context}/${webhook.webhookId}` },
    // The CRM's webhook by its id: its state events may come through another webhook, whose name they carry.
    h('h4', {}, `Webhook ${webhook.webhookId} · ${webhook.context}`),
    h(
      'dl',
      { class: 'facts' },
      h('dt', { title: 'WebhookName of its last state event' }, 'State events via'),
      h('dd', {}, webhook.webhookName || '—'),
      h('dt', {}, 'State'),
      h('dd', { class: `state state-${name}` }, stateLabel(name)),
      h('dt', {}, 'Since'),
      h('dd', {}, time(webhook.stateChangedAt)),
      // FieldValues.events of its last state event: what the CRM counts as sent, not what arrived here.
      h('dt', { title: 'FieldValues.events of its last state event' }, 'Sent, as the CRM counts'),
      h('dd', {}, webhook.events ?? '—'),
    ),
    h('h5', {}, 'State changes'),
    h(
      'ol',
      { class: 'timeline' },
      (webhook.transitions ?? []).map((transition) =>
        h(
          'li',
          {},
          time(transition.timestamp),
          ' ',
          h('span', { class: `state state-${transition.stateName}` }, stateLabel(transition.stateName)),
          ' · ',
          eventLink(transition.eventId),
        ),
      ),
    ),
    h('h5', {}, 'Gap windows'),
    gapList(gaps),
    reactivatedOutsideGaps(gaps),
  );
}

function queueSection(queues, reload) {
  return h(
    'section',
    { 'aria-labelledby': 'queues-title' },
    h('h3', { id: 'queues-title' }, 'Queues'),
    h(
      'table',
      { class: 'queues' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Queue', 'Visible', 'In flight', 'Delayed', 'Dead-letter queue', 'Redrive'].map((t) =>
            h('th', {}, t),
          ),
        ),
      ),
      h(
        'tbody',
        {},
        queues.map((queue) =>
          h(
            'tr',
            { 'data-queue': queue.key },
            h(
              'th',
              { scope: 'row' },
              queue.key === 'parked' ? h('a', { href: '#/parked' }, 'parked') : queue.key,
            ),
            h('td', {}, queue.visible),
            h('td', {}, queue.inFlight),
            h('td', {}, queue.delayed),
            h('td', {}, queue.dlq === 0 ? '0' : `⚠ ${queue.dlq}`),
            h(
              'td',
              {},
              queue.dlq === 0
                ? 'nothing to redrive'
                : h(
                    'button',
                    { type: 'button', onclick: () => redrive(queue, reload) },
                    `Redrive ${queue.key}`,
                  ),
            ),
          ),
        ),
      ),
    ),
  );
}

async function redrive(queue, reload) {
  const ok = await confirmed(
    `Redrive ${queue.key}?`,
    `Move the ${queue.dlq} message(s) of ${queue.dlqName} back to ${queue.name}, where the worker takes them again.`,
    'Redrive',
  );
  if (!ok) return;
  say(`Redriving ${queue.key}…`);
  try {
    const answer = await api.redrive(queue.key);
    const text = `Redrive of ${answer.queue}: ${answer.status}, ${answer.moved} moved${answer.failureReason ? ` (${answer.failureReason})` : ''}.`;
    say(text);
    await reload();
  } catch (error) {
    say(`✖ Redrive of ${queue.key} failed: ${error.message}`);
  }
}
