import { api } from './api.js';
import { confirmed, h, say, time } from './dom.js';

/**
 * A webhook's gap windows, each with what reconciliation can do for it (`GET /gaps` says, where the
 * source knows): a Reconcile button that queues the window (`POST /reconcile`, with the page token), or
 * the line saying why it cannot be recovered (no CRM_API_URL).
 */
export function gapList(gaps) {
  if (gaps.length === 0) return h('p', {}, 'No gap: every event was received while Active.');
  return h(
    'ul',
    { class: 'gaps' },
    gaps.map((gap) =>
      h(
        'li',
        { class: `gap ${gap.closedAt ? 'closed' : 'open'}`, 'data-gap': gap.openedAt },
        ...(gap.closedAt
          ? ['Gap (closed) from ', time(gap.openedAt), ' to ', time(gap.closedAt)]
          : [
              h('strong', {}, '⚠ Gap open'),
              ' since ',
              time(gap.openedAt),
              ': events may be missing; re-fetch changes from there.',
            ]),
        ...recovery(gap),
      ),
    ),
  );
}

function recovery(gap) {
  if (gap.recoverable === true)
    return [
      ' ',
      h(
        'button',
        { type: 'button', class: 'reconcile', title: gap.recovery, onclick: () => reconcile(gap) },
        'Reconcile',
      ),
    ];
  if (gap.recoverable === false) return [' ', h('span', { class: 'recovery off' }, `✖ ${gap.recovery}`)];
  return [];
}

async function reconcile(gap) {
  const window = gap.closedAt ? `${gap.openedAt} to ${gap.closedAt}` : `${gap.openedAt} until now`;
  const ok = await confirmed(
    `Reconcile ${gap.context}?`,
    `Fetch the rows of ${gap.context} changed from ${window} back from the CRM (${gap.recovery}); each row that differs is applied as a <entity>.reconciled event.`,
    'Reconcile',
  );
  if (!ok) return;
  say(`Queuing a reconcile of ${gap.context}…`);
  try {
    await api.reconcile({ context: gap.context, from: gap.openedAt, to: gap.closedAt });
    say(`Reconcile of ${gap.context} from ${window} queued.`);
  } catch (error) {
    say(`✖ Reconcile of ${gap.context} failed: ${error.message}`);
  }
}
