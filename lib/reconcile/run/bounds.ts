import type { RunBounds } from '../../config/reconcile-bounds.js';
import type { ReconcileOutcome } from '../../store/recovery.js';
import type { ReconcileRequest } from '../request.js';
import type { Cursor } from './cursor.js';

/**
 * Why a run must give up now, or undefined: it has run `maxInvocations` invocations, it is older than
 * `maxRunHours`, or it would wait (its `notBefore`) past that age. Checked before each invocation of a
 * run that carried on, so a tenant that never comes back ends the run visibly.
 */
export function pastBounds(cursor: Cursor, now: Date, bounds: RunBounds): string | undefined {
  const started = Date.parse(cursor.startedAt);
  const deadline = started + bounds.maxRunHours * 3_600_000;
  const ran = `started ${cursor.startedAt}, ${cursor.counters.invocations} invocations`;
  if (cursor.counters.invocations >= bounds.maxInvocations)
    return `the run gave up (${ran}): RECONCILE_MAX_INVOCATIONS is ${bounds.maxInvocations}`;
  const until = cursor.notBefore === undefined ? now.getTime() : Date.parse(cursor.notBefore);
  if (Math.max(until, now.getTime()) >= deadline)
    return `the run gave up (${ran}, the CRM not done by ${new Date(deadline).toISOString()}): RECONCILE_MAX_RUN_HOURS is ${bounds.maxRunHours}`;
  return undefined;
}

/**
 * Whether `newer`, the run last recorded for the webhook, makes this run (`request` at `cursor`)
 * redundant: it started later, did not fail, and its window covers this one's (from no later, to no
 * earlier, every entity this one reconciles) with as many deletes allowed (the same cap, or a
 * `maxDeletes` no smaller than this one's: a person's run that applies held deletes is not stopped by a
 * poll's that would hold them again). Then this run stops and lets it run alone.
 */
export function supersedes(
  newer: ReconcileOutcome | undefined,
  request: ReconcileRequest,
  cursor: Cursor,
): boolean {
  if (newer === undefined || newer.status === 'failed') return false;
  if (Date.parse(newer.startedAt) <= Date.parse(cursor.startedAt)) return false;
  const from =
    newer.full === true ||
    (request.full !== true &&
      newer.from !== undefined &&
      request.from !== undefined &&
      Date.parse(newer.from) <= Date.parse(request.from));
  const to = Date.parse(newer.to ?? newer.startedAt) >= Date.parse(cursor.to);
  const covered = newer.entities;
  const entities =
    covered === undefined || request.entities?.every((entity) => covered.includes(entity)) === true;
  const deletes =
    request.maxDeletes === undefined
      ? newer.maxDeletes === undefined
      : newer.maxDeletes !== undefined && newer.maxDeletes >= request.maxDeletes;
  return from && to && entities && deletes;
}
