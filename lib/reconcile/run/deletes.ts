import { DEFAULT_DELETE_CAP, type DeleteCap } from '../../config/reconcile-bounds.js';
import { type CrmClient, CrmRetryLater, type CrmTable } from '../../crm/index.js';
import type { OutboundMessage } from '../../queue/port.js';
import type { SnapshotSender } from '../../queue/sqs-snapshots.js';
import type { StoredRows } from '../../store/row-set.js';
import type { ReconcileRequest } from '../request.js';
import type { Cursor } from './cursor.js';
import { snapshotMessage } from './snapshot-message.js';
import { snapshot } from './snapshots.js';

export interface DeletesDeps {
  crm: Pick<CrmClient, 'listIds' | 'isDeleted'>;
  stored: Pick<StoredRows, 'keys' | 'hasAny' | 'status'>;
  send: SnapshotSender;
  /** The deletes one run may apply per entity (RECONCILE_MAX_DELETES, _PERCENT); default DEFAULT_DELETE_CAP. */
  maxDeletes?: DeleteCap | undefined;
  /** Missing rows a count keeps in the cursor to delete without listing the ids again (default {@link KEPT_MISSING}). */
  keepMissing?: number;
  now(): Date;
  warn(message: string): void;
}

/** Missing rows a count keeps (about 8 KB of the cursor): deleting them needs no second listing of the ids. */
export const KEPT_MISSING = 1_000;
/** Kept rows confirmed per step of the run (a page of ids' worth of calls). */
const CONFIRM_STEP = 200;

/**
 * One page of the CRM's ids (ascending) against the stored rows of the same key range (the index's
 * Query: see docs/workers.md "Finding deletes"). A stored row not deleted yet and not listed is
 * missing. Two passes, so that a CRM whose listing names too few ids deletes nothing: `count` lists
 * the ids and counts the stored and the missing rows (keeping up to {@link KEPT_MISSING} of the
 * missing); when some are missing and no more than the cap allows (the request's `maxDeletes`, else
 * the larger of {@link DeleteCap}'s rows and percent of the stored rows), `deletes` confirms each
 * missing row by one call (`isDeleted`: a row created since it was listed is found and stays), then
 * sends it as deleted: the kept ones, or, when there were more, those of a second listing. More than
 * the cap (in either listing): that entity's deletes are held, said in `notReconciled` and
 * `deletesHeld`, and no row is deleted (on a second listing, none past the cap). Returns true when the
 * entity is done.
 */
export async function deletesPage(
  request: ReconcileRequest,
  deps: DeletesDeps,
  cursor: Cursor,
  entity: string,
  table: CrmTable,
): Promise<boolean> {
  const { context } = request;
  // A run that reached its deletes before they were counted (a message of an older version): count first.
  if (cursor.phase === 'deletes' && cursor.deletes?.allowed === undefined) {
    cursor.phase = 'count';
    delete cursor.after;
    delete cursor.deletes;
  }
  if (cursor.phase === 'deletes' && cursor.deletes?.keys !== undefined)
    return confirmKept(deps, cursor, context, entity, table);
  // Nothing stored, nothing to delete: no listing of the CRM's ids.
  if (cursor.phase === 'count' && cursor.after === undefined && !(await deps.stored.hasAny(context, entity)))
    return true;
  const page = await deps.crm.listIds(context, table, undefined, cursor.after);
  // Up to the page's highest id, or every key left after the last page.
  const upTo = page.nextKey;
  const listed = new Set(page.items.map(Number));
  const keys = await deps.stored.keys(context, entity, cursor.after, upTo);
  const notListed = keys.filter((key) => !listed.has(key));
  const missing = await undeleted(deps, context, entity, notListed);
  const tally = cursor.deletes ?? { stored: 0, missing: 0, keys: [] };
  cursor.deletes = tally;
  if (cursor.phase === 'count') {
    tally.stored += keys.length - (notListed.length - missing.length);
    tally.missing += missing.length;
    tally.keys?.push(...missing);
    if (tally.missing > (deps.keepMissing ?? KEPT_MISSING)) delete tally.keys;
    if (upTo !== undefined) {
      cursor.after = upTo;
      return false;
    }
    return counted(request, deps, cursor, entity);
  }
  const allowed = tally.allowed ?? 0;
  if (tally.missing + missing.length > allowed) {
    hold(
      cursor,
      entity,
      tally.missing + missing.length,
      `listed again, more of its stored rows than the ${allowed} counted are not in the CRM's list of ids: no more deleted`,
    );
    return true;
  }
  const { messages, checked, retryLater } = await confirmEach(deps, cursor, context, entity, table, missing);
  await sendDeletes(deps, cursor, messages);
  tally.missing += checked;
  if (retryLater !== undefined) {
    // The next invocation lists the ids after the last row checked.
    if (checked > 0) cursor.after = missing[checked - 1];
    throw retryLater;
  }
  if (upTo === undefined) return true;
  cursor.after = upTo;
  return false;
}

/** The count is done: nothing missing (done), more than the cap (held, done), or the deletes pass next. */
function counted(request: ReconcileRequest, deps: DeletesDeps, cursor: Cursor, entity: string): boolean {
  const { stored, missing } = cursor.deletes!;
  if (missing === 0) return true;
  const cap = deps.maxDeletes ?? DEFAULT_DELETE_CAP;
  const allowed = request.maxDeletes ?? Math.max(cap.rows, Math.floor((cap.percent * stored) / 100));
  if (missing > allowed) {
    // The line names what decided the cap: the request's maxDeletes, or the stage's settings.
    const cappedBy =
      request.maxDeletes === undefined
        ? `a run deletes (${allowed}: RECONCILE_MAX_DELETES, RECONCILE_MAX_DELETES_PERCENT)`
        : `this run's maxDeletes (${allowed}) allows`;
    hold(
      cursor,
      entity,
      missing,
      `${missing} of its ${stored} stored rows are not in the CRM's list of ids, more than ${cappedBy}: none deleted; if the CRM did delete them, reconcile it again with maxDeletes=${missing}`,
    );
    return true;
  }
  delete cursor.after;
  cursor.phase = 'deletes';
  const { keys } = cursor.deletes!;
  cursor.deletes = { stored, missing: 0, allowed, ...(keys !== undefined && { keys }) };
  return false;
}

/** A step of the kept missing rows, still stored undeleted, confirmed and sent as deleted; true once none is left. */
async function confirmKept(
  deps: DeletesDeps,
  cursor: Cursor,
  context: string,
  entity: string,
  table: CrmTable,
): Promise<boolean> {
  const tally = cursor.deletes!;
  const keys = tally.keys!;
  // Those deleted since the count (a live delete, another run, this message again) are not asked for.
  const step = await undeleted(deps, context, entity, keys.slice(0, CONFIRM_STEP));
  const { messages, checked, retryLater } = await confirmEach(deps, cursor, context, entity, table, step);
  await sendDeletes(deps, cursor, messages);
  if (retryLater !== undefined) {
    tally.keys = [...step.slice(checked), ...keys.slice(CONFIRM_STEP)];
    throw retryLater;
  }
  tally.keys = keys.slice(CONFIRM_STEP);
  return tally.keys.length === 0;
}

/**
 * Each of `keys` confirmed gone by one call and made its snapshot, in order. When the CRM says retry
 * later, what was checked so far is returned with it (its deletes are sent, the rest asked later).
 */
async function confirmEach(
  deps: DeletesDeps,
  cursor: Cursor,
  context: string,
  entity: string,
  table: CrmTable,
  keys: readonly number[],
): Promise<{ messages: OutboundMessage[]; checked: number; retryLater?: CrmRetryLater }> {
  const messages: OutboundMessage[] = [];
  let checked = 0;
  try {
    for (const primaryKey of keys) {
      const message = await deletedSnapshot(deps, cursor, context, entity, table, primaryKey);
      if (message !== undefined) messages.push(message);
      checked++;
    }
  } catch (error) {
    if (!(error instanceof CrmRetryLater)) throw error;
    return { messages, checked, retryLater: error };
  }
  return { messages, checked };
}

/**
 * The entity's deletes held back: said in `notReconciled` (the gap's card, the completed event) and
 * `deletesHeld`, with the `missing` rows found so far (the gap's card offers a run that may delete them).
 */
function hold(cursor: Cursor, entity: string, missing: number, why: string): void {
  cursor.notReconciled = { ...cursor.notReconciled, [entity]: why };
  cursor.deletesHeld = { ...cursor.deletesHeld, [entity]: missing };
}

/** Of `keys` (stored rows the CRM did not list), those stored and not deleted (one strongly consistent read each). */
async function undeleted(
  deps: DeletesDeps,
  context: string,
  entity: string,
  keys: readonly number[],
): Promise<number[]> {
  const found: number[] = [];
  for (const primaryKey of keys) {
    const status = await deps.stored.status(context, entity, primaryKey);
    if (status !== undefined && status !== 'deleted') found.push(primaryKey);
  }
  return found;
}

async function sendDeletes(deps: DeletesDeps, cursor: Cursor, messages: OutboundMessage[]): Promise<void> {
  await deps.send(messages);
  cursor.counters.rowsDeleted += messages.length;
}

/** The `Deleted: true` snapshot of a stored row the CRM did not list, if the CRM confirms it gone. */
async function deletedSnapshot(
  deps: DeletesDeps,
  cursor: Cursor,
  context: string,
  entity: string,
  table: CrmTable,
  primaryKey: number,
): Promise<OutboundMessage | undefined> {
  // F: the request's start (the CRM found the row gone after it), never the answer's Date.
  const fetchedAt = deps.now();
  const answer = await deps.crm.isDeleted(context, table, primaryKey);
  if (!answer.deleted) return undefined; // created meanwhile: its change is the next window's
  return snapshot(deps, cursor, () =>
    snapshotMessage({ context, entity, primaryKey, fetchedAt, receivedAt: deps.now(), deleted: true }),
  );
}
