import { api } from './api.js';
import { eventLink, h, poll, say, time } from './dom.js';
import { source } from './source.js';

const POLL_MS = 1000;
const ICONS = { accepted: '✔', parked: '‖', refused: '✖', 'registration-test': '○', unavailable: '⚠' };

/** The ingest's answers as they happen, newest first, polled without a reload; locally only. */
export function mount(container) {
  let stop;
  let left = false;
  source.then((info) => {
    if (left) return;
    if (info.live) stop = follow(container);
    else
      container.replaceChildren(
        h('h2', {}, 'Live'),
        h(
          'p',
          { class: 'note' },
          `Live is local only: the local runtime sees each answer of its ingest. For ${info.name}, the Overview's chart counts the outcomes per minute from CloudWatch.`,
        ),
      );
  }, showError);
  return () => {
    left = true;
    stop?.();
  };
}

function showError(error) {
  say(`Could not load the live view: ${error.message}`);
}

function follow(container) {
  const body = h('tbody');
  const empty = h('p', {}, 'Waiting for deliveries…');
  container.replaceChildren(
    h('h2', {}, 'Live'),
    h('p', { class: 'note' }, 'Every delivery the ingest answers since this runtime started (the last 200).'),
    h(
      'table',
      { class: 'live' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Received', 'Answer', 'Event', 'EventId', 'Detail'].map((t) => h('th', {}, t)),
        ),
      ),
      body,
    ),
    empty,
  );
  let after = 0;
  let failing = false;
  // Polls overlap when one takes longer than POLL_MS: an entry already shown is skipped.
  const render = (entries) => {
    for (const entry of entries.filter((candidate) => candidate.seq > after)) {
      after = entry.seq;
      body.prepend(
        h(
          'tr',
          { class: `answer-${entry.answer}`, 'data-event-id': entry.eventId },
          h('td', {}, time(entry.receivedAt)),
          h('td', {}, `${ICONS[entry.answer] ?? ''} ${entry.answer} (${entry.status})`),
          h('td', {}, entry.event ?? '—'),
          h('td', {}, eventLink(entry.eventId)),
          h('td', {}, entry.queue ? `→ ${entry.queue} queue` : (entry.reason ?? '')),
        ),
      );
    }
    if (entries.length > 0) empty.remove();
    failing = false;
  };
  const pause = (error) => {
    if (!failing) say(`Live updates paused: ${error.message}`);
    failing = true;
  };
  return poll(POLL_MS, () => api.deliveries(after), render, pause).stop;
}
