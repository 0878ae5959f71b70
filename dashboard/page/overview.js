import { api } from './api.js';
import { outcomeChart } from './chart.js';
import { confirmed, eventLink, h, poll, say, time } from './dom.js';

const STATE_NAMES = ['Active', 'Stopped', 'TooManyErrors'];
const STATE_ICONS = { Active: '✔', Stopped: '■', TooManyErrors: '✖' };
const REFRESH_MS = 5000;

/** Webhooks with their state changes and gaps, the queues with a redrive per DLQ, the chart. */
export function mount(container) {
  let shown = '';
  const view = poll(
    REFRESH_MS,
    () => Promise.all([api.webhooks(), api.gaps(), api.queues(), api.outcomes()]),
    ([webhooks, gaps, queues, outcomes]) => {
      const data = JSON.stringify([webhooks, gaps, queues, outcomes]);
      // Redraw only on change, and never under an open confirmation.
      if (data === shown || document.getElementById('confirm').open) return;
      shown = data;
      container.replaceChildren(
        h('h2', {}, 'Overview'),
        webhookSection(webhooks, gaps),
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

function webhookSection(webhooks, gaps) {
  return h(
    'section',
    { 'aria-labelledby': 'webhooks-title' },
    h('h3', { id: 'webhooks-title' }, `Webhooks (${webhooks.length})`),
    webhooks.length === 0
      ? h('p', {}, 'No webhook state event received yet.')
      : webhooks.map((webhook) =>
          webhookCard(
            webhook,
            gaps.filter((gap) => gap.context === webhook.context && gap.webhookId === webhook.webhookId),
          ),
        ),
  );
}

function webhookCard(webhook, gaps) {
  const name = webhook.stateName;
  return h(
    'article',
    { class: 'card webhook', 'data-webhook': `${webhook.context}/${webhook.webhookId}` },
    h('h4', {}, webhook.webhookName || '(no name)'),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Id'),
      h('dd', {}, webhook.webhookId),
      h('dt', {}, 'Context'),
      h('dd', {}, webhook.context),
      h('dt', {}, 'State'),
      h('dd', { class: `state state-${name}` }, `${STATE_ICONS[name] ?? '?'} ${name}`),
      h('dt', {}, 'Since'),
      h('dd', {}, time(webhook.stateChangedAt)),
      h('dt', {}, 'Events'),
      h('dd', {}, webhook.events),
    ),
    h('h5', {}, 'State changes'),
    h(
      'ol',
      { class: 'timeline' },
      (webhook.transitions ?? []).map((transition) => {
        const state = STATE_NAMES[transition.state] ?? String(transition.state);
        return h(
          'li',
          {},
          time(transition.timestamp),
          ' ',
          h('span', { class: `state state-${state}` }, `${STATE_ICONS[state] ?? '?'} ${state}`),
          ' · ',
          eventLink(transition.eventId),
        );
      }),
    ),
    h('h5', {}, 'Gap windows'),
    gaps.length === 0
      ? h('p', {}, 'No gap: every event was received while Active.')
      : h(
          'ul',
          { class: 'gaps' },
          gaps.map((gap) =>
            gap.closedAt
              ? h(
                  'li',
                  { class: 'gap closed' },
                  'Gap (closed) from ',
                  time(gap.openedAt),
                  ' to ',
                  time(gap.closedAt),
                )
              : h(
                  'li',
                  { class: 'gap open' },
                  h('strong', {}, '⚠ Gap open'),
                  ' since ',
                  time(gap.openedAt),
                  ': events may be missing; re-fetch changes from there.',
                ),
          ),
        ),
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
