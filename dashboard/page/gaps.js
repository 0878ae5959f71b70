import { api } from './api.js';
import { confirmed, h, say, time } from './dom.js';

/**
 * A webhook's gap windows, each with what reconciliation can do for it (`GET /gaps` says, where the
 * source knows): a Reconcile button that queues the window (`POST /reconcile`, with the page token), or
 * the line saying why it cannot be recovered (no CRM_API_URL); then what became of the webhook's
 * recovery, on AWS as locally: its last reconcile (the trigger, and running, completed with its counts
 * or failed with its error) and when the poll set it Active again.
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
        lastReconcile(gap.lastReconcile),
        deletesHeld(gap),
        reactivatedIn(gap) &&
          h(
            'p',
            { class: 'reactivated' },
            '↻ Webhook set Active again by the poll ',
            time(gap.reactivatedAt),
            gap.closedAt ? ', which closed this gap' : ', in this gap',
          ),
      ),
    ),
  );
}

/** The poll records a re-activation once the CRM answered, moments after the state event that closes the gap. */
const CLOSING_MS = 60_000;

/**
 * Whether the webhook's last re-activation (`reactivatedAt`, the same on each of its gaps) fell in this
 * gap: from its opening to its closing, or moments after (a gap still open takes any later one). A re-activation is shown
 * under the gap it ended, never under one that opened after it.
 */
function reactivatedIn(gap) {
  if (!gap.reactivatedAt) return false;
  const at = Date.parse(gap.reactivatedAt);
  return at >= Date.parse(gap.openedAt) && (!gap.closedAt || at <= Date.parse(gap.closedAt) + CLOSING_MS);
}

/**
 * The webhook's last re-activation when it fell in none of its gaps (the state event that would have
 * opened one was lost too): said on its own, with its time, under the gaps.
 */
export function reactivatedOutsideGaps(gaps) {
  const [first] = gaps;
  if (!first?.reactivatedAt || gaps.some(reactivatedIn)) return undefined;
  return h(
    'p',
    { class: 'reactivated' },
    '↻ Webhook set Active again by the poll ',
    time(first.reactivatedAt),
    ', outside the gaps above (the state event that would have opened one did not arrive)',
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
    await api.reconcile({
      context: gap.context,
      from: gap.openedAt,
      to: gap.closedAt,
      webhookId: gap.webhookId,
    });
    say(`Reconcile of ${gap.context} from ${window} queued.`);
  } catch (error) {
    say(`✖ Reconcile of ${gap.context} failed: ${error.message}`);
  }
}

/** Who queued a reconcile, from its request's `reason` (lib/reconcile/request.ts). */
const TRIGGERS = {
  'gap-opened': 'queued when the gap opened',
  'gap-closed': 'queued when the gap closed',
  poll: 'queued by the poll of the CRM',
  manual: 'asked for by a person',
  full: 'a scheduled full pass',
};

/** The entities a run left out, each with why; nothing when it left none out. Held deletes are said apart ({@link deletesHeld}). */
function notReconciled(reasons, held) {
  const entries = Object.entries(reasons ?? {}).filter(([entity]) => !Object.hasOwn(held ?? {}, entity));
  if (entries.length === 0) return '';
  return h(
    'span',
    { class: 'not-reconciled' },
    ' Not reconciled: ',
    entries.map(([entity, why]) => `${entity} (${why})`).join('; '),
    '.',
  );
}

/** The CRM API's clock skew a run met (seconds, ahead positive); nothing when within the bound. */
function clockSkew(seconds) {
  if (typeof seconds !== 'number') return '';
  const how = seconds > 0 ? 'ahead of' : 'behind';
  return h(
    'span',
    { class: 'clock-skew' },
    ` The CRM's API clock is ${Math.abs(seconds)} s ${how} its events' Timestamps: snapshots are ordered by the rows' own updated, not by it.`,
  );
}

/** The webhook's last reconcile (`GET /gaps`' lastReconcile): its trigger, then where it got to. */
function lastReconcile(run) {
  if (!run) return undefined;
  const trigger = TRIGGERS[run.reason] ?? `reason ${run.reason}`;
  const head = ['Last reconcile (', trigger, ', requested ', time(run.requestedAt), '): '];
  if (run.status === 'completed')
    return h(
      'p',
      { class: 'last-reconcile completed', 'data-status': 'completed' },
      ...head,
      h('strong', {}, '✔ completed'),
      ' ',
      time(run.at),
      `: ${count(run.rowsListed, 'row')} listed, ${run.rowsChanged ?? 0} changed, ${run.rowsDeleted ?? 0} deleted, ${count(run.apiCalls, 'API call')}.`,
      notReconciled(run.notReconciled, run.deletesHeld),
      clockSkew(run.clockSkewSeconds),
    );
  if (run.status === 'failed')
    return h(
      'p',
      { class: 'last-reconcile failed error', 'data-status': 'failed' },
      ...head,
      h('strong', {}, '✖ failed'),
      ' ',
      time(run.at),
      ': ',
      h('span', { class: 'mono' }, run.error ?? 'no error recorded'),
    );
  return h(
    'p',
    { class: 'last-reconcile running', 'data-status': 'running' },
    ...head,
    h('strong', {}, '⏳ running'),
    ' since ',
    time(run.at),
    '.',
  );
}

function count(value, noun) {
  const n = value ?? 0;
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/**
 * The entities whose deletes the last run held back (more stored rows missing from the CRM's list of
 * ids than RECONCILE_MAX_DELETES allows): each with how many and why, and a button that reconciles that
 * entity again over the run's window with `maxDeletes` set to that count, after a confirmation.
 */
function deletesHeld(gap) {
  const run = gap.lastReconcile;
  const entries = run?.status === 'completed' ? Object.entries(run.deletesHeld ?? {}) : [];
  if (entries.length === 0) return undefined;
  return h(
    'ul',
    { class: 'deletes-held' },
    entries.map(([entity, rows]) =>
      h(
        'li',
        { 'data-entity': entity },
        h('strong', {}, `⚠ Deletes held back: ${entity}, ${count(rows, 'row')}`),
        `: ${run.notReconciled?.[entity] ?? "more stored rows than a run deletes are not in the CRM's list of ids"}. `,
        gap.recoverable === true &&
          h(
            'button',
            { type: 'button', class: 'apply-deletes', onclick: () => applyDeletes(gap, entity, rows) },
            `Delete the ${rows} held rows`,
          ),
      ),
    ),
  );
}

async function applyDeletes(gap, entity, rows) {
  const run = gap.lastReconcile;
  const ok = await confirmed(
    `Delete up to ${rows} ${entity} rows of ${gap.context}?`,
    `Reconcile ${entity} of ${gap.context} again, over the last run's window, with maxDeletes=${rows}: each stored row the CRM no longer lists, up to ${rows}, is checked gone by its own call and deleted here, and where ERASE_ON_DELETE names ${entity} its personal data is erased from the row, its history and the queues. This cannot be undone: do it only if the CRM did delete them.`,
    'Delete rows',
  );
  if (!ok) return;
  say(`Queuing a reconcile of ${entity} of ${gap.context} with maxDeletes=${rows}…`);
  try {
    await api.reconcile({
      context: gap.context,
      ...(run.full === true ? { full: 'true' } : { from: run.from, to: run.to }),
      entities: entity,
      webhookId: gap.webhookId,
      maxDeletes: rows,
    });
    say(`Reconcile of ${entity} of ${gap.context} with maxDeletes=${rows} queued.`);
  } catch (error) {
    say(`✖ Reconcile of ${entity} of ${gap.context} failed: ${error.message}`);
  }
}
