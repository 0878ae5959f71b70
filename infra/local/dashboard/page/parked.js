import { api } from './api.js';
import { bodyBlock, eventLink, h, say, time } from './dom.js';
import { source } from './source.js';

/**
 * Parked deliveries: authentic but unusable, kept with their reason and exact body. Where a look is a
 * receive (AWS), the page says what it costs and looks only when asked.
 */
export function mount(container) {
  container.replaceChildren(h('h2', {}, 'Parked deliveries'), h('p', {}, 'Loading…'));
  source.then(
    (info) => {
      const look = () =>
        api.parked().then(
          (parked) =>
            container.replaceChildren(
              h('h2', {}, `Parked deliveries (${parked.length})`),
              h(
                'p',
                { class: 'note' },
                info.parkedNote,
                ' Replaying parked deliveries is not available yet.',
              ),
              list(parked),
            ),
          (error) => say(`Could not load the parked deliveries: ${error.message}`),
        );
      if (!info.parkedOnRequest) return look();
      container.replaceChildren(
        h('h2', {}, 'Parked deliveries'),
        h('p', { class: 'note' }, info.parkedNote),
        h('button', { type: 'button', onclick: look }, 'Look at the parked deliveries (a receive)'),
      );
    },
    (error) => say(`Could not load the parked deliveries: ${error.message}`),
  );
}

function list(parked) {
  if (parked.length === 0) return h('p', {}, 'Nothing is parked.');
  return h(
    'table',
    { class: 'parked' },
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
      parked.map((message) => {
        let event;
        try {
          event = JSON.parse(message.body);
        } catch {
          event = {};
        }
        return h(
          'tr',
          { 'data-message': message.messageId },
          h(
            'td',
            {},
            `⏸ ${message.reason ?? 'unknown'}`,
            message.attributes.detail ? h('div', { class: 'meta' }, message.attributes.detail) : '',
          ),
          h('td', {}, event.Event ?? '—'),
          h('td', {}, eventLink(event.EventId ?? message.deduplicationId)),
          h('td', {}, time(message.attributes.receivedAt ?? message.sentAt)),
          h('td', {}, h('details', {}, h('summary', {}, 'Body'), bodyBlock(message.body))),
        );
      }),
    ),
  );
}
