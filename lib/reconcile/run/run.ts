import { type Backoff, fullJitterMs } from '../../backoff.js';
import type { DeleteCap } from '../../config/reconcile-bounds.js';
import { MAX_RETRY_AFTER_MS } from '../../crm/call.js';
import {
  CrmApiError,
  CrmAuthError,
  type CrmClient,
  CrmRetryLater,
  type CrmTable,
  crmTableOf,
  isRefusal,
  MAX_CRM_TEXT_CHARS,
} from '../../crm/index.js';
import type { SnapshotSender } from '../../queue/sqs-snapshots.js';
import type { StoredRows } from '../../store/row-set.js';
import type { LifecycleDetails } from '../records/lifecycle.js';
import type { ReconcileRequest } from '../request.js';
import { apiSkewMs, CLOCK_SKEW_BOUND_MS } from './clock.js';
import { type Counters, type Cursor, NO_COUNTS, parseCursor } from './cursor.js';
import { deletesPage } from './deletes.js';
import { NOT_RECONCILED, runScope, type Shapes, shapeOf } from './scope.js';
import { pageSnapshots } from './snapshots.js';

export interface ReconcileDeps {
  crm: Pick<CrmClient, 'tenantState' | 'listChanged' | 'listIds' | 'isDeleted' | 'listWebhooks'>;
  stored: StoredRows;
  send: SnapshotSender;
  /**
   * How far the sender's clock is ahead of the receiver's (a live event's Timestamp less its arrival),
   * when the receiver has seen a live event of the context: what a skew of the CRM API's Date is
   * measured against. Absent or undefined: the clocks are taken to agree.
   */
  senderAheadMs?(context: string): Promise<number | undefined>;
  /** Whether the receiver stores the rows of `entity` (ENTITIES). */
  stores(entity: string): boolean;
  /** HTTP requests the CRM client has made so far (a counter: the run adds what it moved by). */
  apiCalls(): number;
  /** Milliseconds this invocation may still start a page in (its remaining time less the hand-over). */
  timeLeftMs(): number;
  now(): Date;
  /** One line about a row skipped (it cannot become a snapshot). */
  warn(message: string): void;
  /** The deletes one run may apply per entity (RECONCILE_MAX_DELETES, _PERCENT); default DEFAULT_DELETE_CAP. */
  maxDeletes?: DeleteCap | undefined;
  /** Missing rows a count keeps to delete without listing the ids again (lib/reconcile/run/deletes.ts). */
  keepMissing?: number;
  /** The jitter of a wait the CRM asked for (default Math.random). */
  random?: () => number;
}

/** The run ended: what it did, for `receiver.reconcile.completed`. */
export interface Completed {
  status: 'completed';
  detail: LifecycleDetails['receiver.reconcile.completed'];
  counters: Counters;
  /** The largest skew of the CRM API's Date against the live events' clock beyond the bound, if any. */
  clockSkewMs?: number;
  /** Entities whose deletes were held back, more than RECONCILE_MAX_DELETES allows, with the rows missing (why: in `notReconciled`). */
  deletesHeld?: Record<string, number>;
}

/** The run goes on in another invocation: `request` (with its cursor) after `delayMs`. */
export interface CarryOn {
  status: 'carry-on';
  request: ReconcileRequest;
  delayMs: number;
  /** Why: `time` (the invocation's budget), or the CRM's RetryLater reason (throttled, unavailable, budget, not-running). */
  why: string;
}

/** Below this, no page is started: a page (one call, its snapshots sent) fits in it. */
export const PAGE_RESERVE_MS = 5_000;

/** The oldest time a full pass asks from: before any CRM row was registered. */
const BEGINNING = new Date(0);

/**
 * One invocation's share of a reconcile: the tenant's state (not running: carry on later,
 * no failure), the entities it covers (lib/reconcile/run/scope.ts, once per run), then per entity the
 * archive's rows changed since `from` (every row when `full`), each a `<entity>.reconciled` snapshot
 * at F = the page's CRM time, sent to the row's queue; then the CRM's ids against the stored rows,
 * each stored row the CRM no longer lists confirmed by one call (`isDeleted`) and sent as a
 * `Deleted: true` snapshot. Page by page: the cursor moves only once a page's snapshots are queued,
 * so a crash repeats at most a page (the same row again is one more equal snapshot: nothing applied
 * twice). Returns {@link CarryOn} when the time left is short or the CRM says retry later; throws on
 * anything else (the queue retries the message, then moves it to its DLQ).
 */
export async function runReconcile(
  request: ReconcileRequest,
  deps: ReconcileDeps,
): Promise<Completed | CarryOn> {
  const callsBefore = deps.apiCalls();
  const cursor = startOrResume(request, deps);
  cursor.counters.invocations++;
  const carryOn = (delayMs: number, why: string): CarryOn => {
    cursor.counters.apiCalls += deps.apiCalls() - callsBefore;
    const notBefore = delayMs > 0 ? new Date(deps.now().getTime() + delayMs).toISOString() : undefined;
    const next = { ...cursor, notBefore };
    if (notBefore === undefined) delete next.notBefore;
    return { status: 'carry-on', request: { ...request, cursor: next }, delayMs, why };
  };
  /** A wait the CRM asked for: longer the more of them in a row ({@link crmWaitMs}). */
  const crmAsked = (askedMs: number, why: string): CarryOn => {
    cursor.waits = (cursor.waits ?? 0) + 1;
    return carryOn(crmWaitMs(askedMs, cursor.waits, deps.random), why);
  };
  const since = request.full === true ? BEGINNING : new Date(request.from!);
  const shapes: Shapes = new Map();
  try {
    const state = await deps.crm.tenantState(request.context);
    if (!state.running) return crmAsked(state.retryAfterMs, `not-running (${state.state})`);
    if (cursor.unscoped === true) {
      const scope = await runScope(request, deps, shapes);
      Object.assign(cursor, scope);
      delete cursor.unscoped;
    }
    while (cursor.entity < cursor.entities.length) {
      if (deps.timeLeftMs() < PAGE_RESERVE_MS) return carryOn(0, 'time');
      const entity = cursor.entities[cursor.entity]!;
      const table = crmTableOf(entity)!;
      try {
        if (cursor.phase === 'changed')
          await changedPage(request, deps, cursor, entity, table, since, shapes);
        else if (await deletesPage(request, deps, cursor, entity, table)) nextEntity(cursor);
        delete cursor.waits; // a page done: the CRM answers again
      } catch (error) {
        if (
          !(error instanceof CrmApiError) ||
          error instanceof CrmRetryLater ||
          error instanceof CrmAuthError
        )
          throw error;
        // The CRM's refusal names the table and key asked for: the catalogue's, lists' and custom
        // tables' follow the published samples, unverified against a real tenant.
        error.message = `${entity} from the CRM's table ${table.table} (key ${table.key}): ${error.message}`;
        if (!isRefusal(error)) throw error;
        // Retrying cannot change it (a tenant without that table, an app without rights to it): the
        // entity is left out, said with the CRM's answer, and the others go on.
        cursor.notReconciled = { ...cursor.notReconciled, [entity]: oneLine(error.message) };
        nextEntity(cursor);
      }
    }
  } catch (error) {
    if (!(error instanceof CrmRetryLater)) throw error;
    if (error.reason === 'budget') return carryOn(error.retryAfterMs, error.reason);
    return crmAsked(error.retryAfterMs, error.reason);
  }
  cursor.counters.apiCalls += deps.apiCalls() - callsBefore;
  const { counters } = cursor;
  return {
    status: 'completed',
    counters,
    ...(cursor.clockSkewMs !== undefined && { clockSkewMs: cursor.clockSkewMs }),
    ...(cursor.deletesHeld !== undefined && { deletesHeld: cursor.deletesHeld }),
    detail: {
      context: request.context,
      reason: request.reason,
      from: request.full === true ? undefined : request.from,
      to: cursor.to,
      entities: cursor.entities,
      scopeFrom: cursor.scopeFrom,
      notReconciled: cursor.notReconciled ?? {},
      rowsListed: counters.rowsListed,
      rowsChanged: counters.rowsChanged,
      rowsDeleted: counters.rowsDeleted,
      apiCalls: counters.apiCalls,
      durationMs: deps.now().getTime() - Date.parse(cursor.startedAt),
    },
  };
}

/** The cursor the request carries, or a new one (its entities fixed once the tenant answers). */
function startOrResume(request: ReconcileRequest, deps: ReconcileDeps): Cursor {
  const resumed = parseCursor(request.cursor);
  if (resumed !== undefined) return structuredClone(resumed);
  if (request.full !== true && request.from === undefined)
    throw new Error(`reconcile of ${request.context}: from is required unless full is true`);
  const now = deps.now().toISOString();
  return {
    startedAt: now,
    to: request.to ?? now,
    entities: [],
    unscoped: true,
    entity: 0,
    phase: 'changed',
    counters: { ...NO_COUNTS },
  };
}

/** One archive page of rows changed since `since`: a snapshot each, queued; then the cursor moves. */
async function changedPage(
  request: ReconcileRequest,
  deps: ReconcileDeps,
  cursor: Cursor,
  entity: string,
  table: CrmTable,
  since: Date,
  shapes: Shapes,
): Promise<void> {
  const shape = await shapeOf(deps, shapes, request.context, entity);
  // Its stored rows were there when the run started; none now means the store was emptied meanwhile.
  if (shape === undefined) throw new Error(`${entity}: ${NOT_RECONCILED.noSample}`);
  const requestedAt = deps.now().getTime();
  const page = await deps.crm.listChanged(
    request.context,
    table,
    shape.fields,
    since,
    undefined,
    cursor.afterKey,
  );
  const exchange = { requestedAt, answeredAt: deps.now().getTime() };
  const senderAheadMs = (await deps.senderAheadMs?.(request.context)) ?? 0;
  noteSkew(cursor, apiSkewMs(page.crmTime, exchange, senderAheadMs));
  const at = { context: request.context, entity, shape, exchange, senderAheadMs };
  const { messages, changing } = await pageSnapshots(deps, cursor, at, page.items);
  await deps.send(messages);
  cursor.counters.rowsListed += page.items.length;
  cursor.counters.rowsChanged += changing;
  if (page.nextKey !== undefined) cursor.afterKey = page.nextKey;
  else {
    delete cursor.afterKey;
    cursor.phase = 'count';
  }
}

/** The first line of `text`, at most as long as the CRM's text is kept anywhere. */
function oneLine(text: string): string {
  const line = text.split(/\r?\n/, 1)[0]!.trim();
  return line.length > MAX_CRM_TEXT_CHARS ? `${line.slice(0, MAX_CRM_TEXT_CHARS - 1)}…` : line;
}

function nextEntity(cursor: Cursor): void {
  delete cursor.afterKey;
  delete cursor.after;
  delete cursor.deletes;
  cursor.phase = 'changed';
  cursor.entity++;
}

/** Keeps the run's largest skew of the CRM API's clock beyond {@link CLOCK_SKEW_BOUND_MS} (signed). */
function noteSkew(cursor: Cursor, skewMs: number): void {
  if (Math.abs(skewMs) > Math.max(CLOCK_SKEW_BOUND_MS, Math.abs(cursor.clockSkewMs ?? 0)))
    cursor.clockSkewMs = Math.round(skewMs);
}

/** The waits a run makes when the CRM asks for them in a row: up to 250 ms, doubling, at most Retry-After's cap. */
const CRM_WAITS: Backoff = { baseMs: 250, capMs: MAX_RETRY_AFTER_MS };

/**
 * How long to wait when the CRM asked to (it throttles, is down, or not running): what it asked for,
 * or longer the more waits in a row (`waits`) it asked for, a full-jitter wait up to the cap
 * Retry-After has, so a CRM that answers 503 without Retry-After for hours is asked less and less
 * often rather than every few seconds.
 */
function crmWaitMs(askedMs: number, waits: number, random: () => number = Math.random): number {
  return Math.max(askedMs, fullJitterMs(waits, CRM_WAITS, random));
}
