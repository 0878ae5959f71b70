import { api } from './api.js';
import { bodyBlock, confirmed, eventLink, h, say, time } from './dom.js';
import { source } from './source.js';

/**
 * Parked deliveries: authentic but unusable, kept with their reason and exact body, and a Replay that
 * decides them again; then those of the parked DLQ. Where a look is a receive (AWS), the page says
 * what it costs and looks only when asked, after a replay too. The server reads each body's event and
 * EventId (`GET /parked`): a body is whatever was delivered (`null`, an array, not JSON).
 */
export function mount(container) {
  let left = false;
  const heading = h('h2', {}, 'Parked deliveries');
  const note = h('p', { class: 'note' });
  const result = h('p', { class: 'replay-result', 'aria-live': 'polite' });
  const listed = h('div', {}, h('p', {}, 'Loading…'));
  container.replaceChildren(heading, note, listed);
  source.then((info) => {
    if (left) return;
    note.textContent = info.parkedNote;
    const look = () =>
      api
        .parked()
        .then((messages) => {
          if (left) return;
          const parked = messages.filter((message) => message.where === 'parked');
          const dead = messages.filter((message) => message.where === 'dlq');
          heading.textContent = `Parked deliveries (${parked.length})`;
          listed.replaceChildren(
            parked.length === 0 ? h('p', {}, 'Nothing is parked.') : list(parked),
            ...(dead.length === 0 ? [] : deadLettered(dead)),
          );
        })
        .catch(showError);
    const offerLook = () => {
      heading.textContent = 'Parked deliveries';
      listed.replaceChildren(
        h('button', { type: 'button', onclick: look }, 'Look at the parked deliveries (a receive)'),
      );
    };
    const refresh = info.parkedOnRequest ? offerLook : look;
    const form = replayForm(info, async (filter) => {
      result.textContent = 'Replaying…';
      try {
        const text = describe(await api.replayParked(filter));
        if (left) return;
        result.textContent = text;
        refresh();
      } catch (error) {
        result.textContent = `✖ Replay failed: ${error.message}`;
      }
    });
    container.replaceChildren(heading, note, form, result, listed);
    refresh();
  }, showError);
  return () => {
    left = true;
  };
}

function showError(error) {
  say(`Could not load the parked deliveries: ${error.message}`);
}

/** The Replay form: an optional event pattern and maximum, then a confirmation. */
function replayForm(info, replay) {
  const form = h(
    'form',
    {
      class: 'lookup replay',
      'aria-labelledby': 'replay-title',
      onsubmit: async (event) => {
        event.preventDefault();
        const data = new FormData(form);
        const filter = { event: String(data.get('event')).trim(), max: String(data.get('max')).trim() };
        const which = filter.max ? `At most ${filter.max} of the parked deliveries` : 'Every parked delivery';
        const of = filter.event ? ` of ${filter.event}` : '';
        const text = `${which}${of} decided again: what routes now goes to its queue, the rest stays parked with its reason brought up to date. ${info.replayNote}`;
        if (!(await confirmed('Replay parked deliveries?', text, 'Replay'))) return;
        const button = form.querySelector('button');
        button.disabled = true;
        await replay(filter);
        button.disabled = false;
      },
    },
    h('h3', { id: 'replay-title' }, 'Replay'),
    h('label', {}, 'Only events matching ', h('input', { name: 'event', placeholder: 'person.*' })),
    h('label', {}, 'At most ', h('input', { name: 'max', type: 'number', min: 1, step: 1, size: 6 })),
    h('button', { type: 'submit' }, 'Replay parked deliveries'),
  );
  return form;
}

/** `Replay: 1 replayed, 2 kept (entity-not-enabled: 2).`, and when it stopped at its time budget, so. */
function describe(report) {
  const reasons = Object.entries(report.keptBy).map(([reason, count]) => `${reason}: ${count}`);
  const more = report.complete === false ? ' It stopped at its time budget: replay again to go on.' : '';
  return `Replay: ${report.replayed} replayed, ${report.kept} kept${reasons.length > 0 ? ` (${reasons.join(', ')})` : ''}.${more}`;
}

/** The parked DLQ: what a look or a replay received too often (maxReceiveCount); a redrive brings it back. */
function deadLettered(messages) {
  return [
    h('h3', { id: 'parked-dlq' }, `In the parked DLQ (${messages.length})`),
    h(
      'p',
      { class: 'note' },
      'Moved there after 5 receives of the parked queue. A replay does not read the DLQ: Redrive parked ' +
        '(Overview) moves them back to the parked queue, where a replay decides them.',
    ),
    list(messages, 'parked-dlq'),
  ];
}

function list(parked, labelledBy) {
  return h(
    'table',
    { class: labelledBy ? 'parked-dlq' : 'parked', 'aria-labelledby': labelledBy },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['Reason', 'Event', 'EventId', 'Received', 'Body'].map((t) => h('th', {}, t)),
      ),
    ),
    h(
      'tbody',
      {},
      parked.map((message) =>
        h(
          'tr',
          { 'data-message': message.messageId },
          h(
            'td',
            {},
            `‖ ${message.reason ?? 'unknown'}`,
            message.attributes.detail ? h('div', { class: 'meta' }, message.attributes.detail) : '',
          ),
          h('td', {}, message.event ?? '—'),
          h('td', {}, eventLink(message.eventId)),
          h('td', {}, time(message.attributes.receivedAt ?? message.sentAt)),
          h('td', {}, h('details', {}, h('summary', {}, 'Body'), bodyBlock(message.body))),
        ),
      ),
    ),
  );
}
