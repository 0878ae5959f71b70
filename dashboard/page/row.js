import { api } from './api.js';
import { bodyBlock, eventLink, h, json, say, time } from './dom.js';

/**
 * One row of any entity: status, fieldValues with the fields changed since highlighted, its history.
 * The entity is typed (the catalogue's fixed ones offered, `list.<name>` and `y_<table>` accepted);
 * the server says what it accepts.
 */
export function mount(container, [context = '', entity = 'contact', primaryKey = ''] = []) {
  const entities = h('datalist', { id: 'entities' });
  api.entities().then(
    ({ fixed, dynamic }) =>
      entities.replaceChildren(
        ...fixed.map((name) => h('option', { value: name })),
        // `list.<name>` offers `list.` to complete.
        ...dynamic.map((form) => h('option', { value: form.replace(/<\w+>$/, ''), label: form })),
      ),
    (error) => say(`Could not list the entities: ${error.message}`),
  );
  const form = h(
    'form',
    { class: 'lookup', onsubmit: (event) => go(event, form) },
    h(
      'label',
      {},
      'Context ',
      h('input', { name: 'context', required: true, value: context || 'Cust12345' }),
    ),
    h(
      'label',
      {},
      'Entity ',
      h('input', { name: 'entity', required: true, list: 'entities', autocomplete: 'off', value: entity }),
    ),
    entities,
    h(
      'label',
      {},
      'PrimaryKey ',
      h('input', { name: 'primaryKey', required: true, inputmode: 'numeric', value: primaryKey }),
    ),
    h('button', { type: 'submit' }, 'Show row'),
  );
  const result = h('div');
  container.replaceChildren(h('h2', {}, 'Row'), form, result);
  if (primaryKey !== '') show(result, context, entity, primaryKey);
}

function go(event, form) {
  event.preventDefault();
  const data = new FormData(form);
  location.hash = `#/row/${['context', 'entity', 'primaryKey'].map((n) => encodeURIComponent(String(data.get(n)).trim())).join('/')}`;
}

async function show(result, context, entity, primaryKey) {
  try {
    const [row, history] = await Promise.all([
      api.row(context, entity, primaryKey),
      api.rowEvents(context, entity, primaryKey),
    ]);
    result.replaceChildren(rowFacts(row), fieldTable(row), timeline(history));
  } catch (error) {
    result.replaceChildren(
      h('p', { class: 'error' }, `✖ ${error.status === 404 ? 'No such row.' : error.message}`),
    );
    say(`Row ${entity} ${primaryKey}: ${error.message}`);
  }
}

function rowFacts(row) {
  return h(
    'section',
    { 'aria-labelledby': 'row-title' },
    h('h3', { id: 'row-title' }, `${row.entity} ${row.primaryKey} in ${row.context}`),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Status'),
      h('dd', { class: `status status-${row.status}` }, row.status),
      h('dt', {}, 'Last event'),
      h('dd', {}, row.lastEvent, ' · ', eventLink(row.lastEventId)),
      h('dt', {}, 'Last Timestamp'),
      h('dd', {}, h('span', { class: 'mono' }, row.lastTimestamp)),
      h('dt', {}, 'Events merged'),
      h('dd', {}, row.eventCount),
      h('dt', {}, 'Changed by associate'),
      h('dd', {}, row.changedByAssociateId),
    ),
  );
}

function fieldTable(row) {
  const values = row.fieldValues ?? {};
  const changed = new Set(row.changedFields);
  const names = [...new Set([...Object.keys(values), ...row.changedFields])].sort();
  return h(
    'section',
    { 'aria-labelledby': 'fields-title' },
    h('h3', { id: 'fields-title' }, 'FieldValues'),
    h(
      'p',
      {},
      changed.size === 0
        ? 'No field changed since these values were delivered.'
        : `Marked “✎ changed since”: ${changed.size} field(s) named by a later changed event; their value here is stale.`,
    ),
    names.length === 0
      ? h('p', {}, 'No FieldValues delivered yet.')
      : h(
          'table',
          { class: 'fields' },
          h('thead', {}, h('tr', {}, h('th', {}, 'Field'), h('th', {}, 'Value'), h('th', {}, 'Since'))),
          h(
            'tbody',
            {},
            names.map((name) =>
              h(
                'tr',
                { class: changed.has(name) ? 'changed' : undefined, 'data-field': name },
                h('th', { scope: 'row', class: 'mono' }, name),
                h(
                  'td',
                  { class: 'mono' },
                  Object.hasOwn(values, name) ? json(values[name]) : '(not delivered)',
                ),
                h('td', {}, changed.has(name) ? '✎ changed since' : ''),
              ),
            ),
          ),
        ),
  );
}

/**
 * The history, oldest first. An event is “late” when a newer one (by Timestamp) had been recorded
 * before it; duplicates are never recorded twice, so they do not appear here.
 */
function timeline(history) {
  const late = new Array(history.length).fill(false);
  let earliestNewer = '\uffff';
  for (let index = history.length - 1; index >= 0; index--) {
    late[index] = earliestNewer < history[index].recordedAt;
    if (history[index].recordedAt < earliestNewer) earliestNewer = history[index].recordedAt;
  }
  return h(
    'section',
    { 'aria-labelledby': 'history-title' },
    h('h3', { id: 'history-title' }, `History (${history.length})`),
    h(
      'ol',
      { class: 'timeline history' },
      history.map((record, index) => {
        const changes = Array.isArray(record.payload.Changes) ? record.payload.Changes : [];
        return h(
          'li',
          { 'data-event-id': record.eventId },
          h('strong', {}, record.eventName),
          ' ',
          h('span', { class: 'mono' }, record.timestamp),
          ' · ',
          eventLink(record.eventId),
          ' · ',
          h(
            'span',
            { class: late[index] ? 'outcome late' : 'outcome applied' },
            late[index] ? '↶ late' : '✔ applied',
          ),
          record.echo ? h('span', { class: 'tag' }, '↺ echo') : '',
          record.signatureVerified === false ? h('span', { class: 'tag' }, 'unsigned') : '',
          h(
            'div',
            { class: 'changes' },
            changes.length > 0
              ? `Changes: ${changes.join(', ')}`
              : record.payload.FieldValues
                ? 'FieldValues delivered'
                : 'No Changes',
          ),
          h(
            'div',
            { class: 'meta' },
            'received ',
            time(record.receivedAt),
            ' · recorded ',
            time(record.recordedAt),
          ),
          h('details', {}, h('summary', {}, 'Body'), bodyBlock(JSON.stringify(record.payload))),
        );
      }),
    ),
  );
}
