import { api } from './api.js';
import { bodyBlock, h, json, time } from './dom.js';

/** Where an EventId went: its row's history, a webhook's state changes, a queue, a DLQ, parked. */
export function mount(container, [eventId = ''] = []) {
  const form = h(
    'form',
    {
      class: 'lookup',
      onsubmit: (event) => {
        event.preventDefault();
        location.hash = `#/find/${encodeURIComponent(String(new FormData(form).get('eventId')).trim())}`;
      },
    },
    h(
      'label',
      {},
      'EventId ',
      h('input', { name: 'eventId', required: true, size: 40, value: eventId, class: 'mono' }),
    ),
    h('button', { type: 'submit' }, 'Find'),
  );
  const result = h('div');
  container.replaceChildren(h('h2', {}, 'Find an event'), form, result);
  if (eventId !== '') show(result, eventId);
}

async function show(result, eventId) {
  try {
    const found = await api.findEvent(eventId);
    result.replaceChildren(
      h('p', { class: 'note' }, `Searched: ${found.searched}.`),
      found.places.length === 0
        ? h(
            'p',
            { class: 'error' },
            `✖ ${eventId} was not found (refused deliveries are never stored; see Live).`,
          )
        : h('ul', { class: 'places' }, found.places.map(place)),
    );
  } catch (error) {
    result.replaceChildren(h('p', { class: 'error' }, `✖ ${error.message}`));
  }
}

function place(found) {
  if (found.where === 'row') {
    const { record } = found;
    const href = `#/row/${[found.context, found.entity, found.primaryKey].map(encodeURIComponent).join('/')}`;
    return h(
      'li',
      { class: 'place', 'data-where': 'row' },
      h(
        'h3',
        {},
        '✔ In the history of ',
        h('a', { href }, `${found.entity} ${found.primaryKey} (${found.context})`),
      ),
      attributes({
        Event: record.eventName,
        Timestamp: record.timestamp,
        echo: record.echo,
        signatureVerified: record.signatureVerified,
        receivedAt: record.receivedAt,
        recordedAt: record.recordedAt,
      }),
      bodyBlock(JSON.stringify(record.payload)),
    );
  }
  if (found.where === 'webhook') {
    return h(
      'li',
      { class: 'place', 'data-where': 'webhook' },
      h('h3', {}, `✔ A state change of webhook ${found.webhookId} (${found.context})`),
      attributes({ Timestamp: found.transition.timestamp, state: found.transition.state }),
    );
  }
  const { message } = found;
  const title = {
    parked: `‖ Parked: ${message.attributes.reason ?? 'no reason given'}`,
    dlq: `✖ In the dead-letter queue of ${found.queue}`,
    queue: `… Waiting in the ${found.queue} queue`,
  }[found.where];
  return h(
    'li',
    { class: 'place', 'data-where': found.where },
    h('h3', {}, title),
    attributes({
      sentAt: message.sentAt,
      receiveCount: message.receiveCount,
      groupId: message.groupId,
      ...message.attributes,
    }),
    bodyBlock(message.body),
  );
}

function attributes(values) {
  return h(
    'dl',
    { class: 'facts' },
    Object.entries(values)
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => [
        h('dt', {}, name),
        h(
          'dd',
          { class: 'mono' },
          /At$/.test(name) ? time(value) : typeof value === 'string' ? value : json(value),
        ),
      ]),
  );
}
