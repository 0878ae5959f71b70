import * as z from 'zod/mini';
import { CRM_TABLES, crmTableOf, whyNotInCrm } from '../../crm/tables.js';
import { CONTEXT_PATTERN } from '../../events/primitives.js';
import type { ReconcileRequest } from '../request.js';

/** The parameters of a reconcile asked for by a person (`POST /reconcile?…`, `npm run ops -- reconcile --…`). */
export const MANUAL_PARAMETERS = [
  'context',
  'from',
  'to',
  'entities',
  'full',
  'webhookId',
  'maxDeletes',
] as const;
export type ManualParameter = (typeof MANUAL_PARAMETERS)[number];

/** A parameter a manual reconcile cannot take: one line naming it and what is accepted. */
export class ManualRequestError extends Error {
  constructor(
    readonly parameter: string,
    detail: string,
  ) {
    super(`${parameter}: ${detail}`);
    this.name = 'ManualRequestError';
  }
}

const IsoTime = z.iso.datetime({ offset: true });
const ISO_ACCEPTED = 'an ISO 8601 time with its offset (2026-11-27T10:00:00Z) accepted';

/**
 * A person's reconcile request from text parameters (a query string, command-line flags), checked
 * before anything is queued: `context` always; `from` unless `full=true` (`to` defaults to when the run
 * starts); `entities` comma-separated, each one the CRM can list (`crmTableOf`: CRM_TABLES, lists by
 * name, custom tables; `quote`, whose events carry no FieldValues, is refused with that reason);
 * `webhookId` for a gap's reconcile (the run is then recorded on that webhook's gap card);
 * `maxDeletes`, the deletes the run may apply per entity instead of RECONCILE_MAX_DELETES's cap.
 * Throws a {@link ManualRequestError} naming the first wrong or unknown parameter. `requestedAt` is
 * `now` to the minute, so the same request asked twice in a minute (a double click, two operators) is
 * one message of the reconcile queue (its deduplication id hashes the request).
 *
 * @example manualRequest({ context: 'Cust1', from: '2026-11-27T10:00:00Z' }, new Date())
 */
export function manualRequest(
  params: Readonly<Record<string, string | undefined>>,
  now: Date,
): ReconcileRequest {
  for (const name of Object.keys(params))
    if (!(MANUAL_PARAMETERS as readonly string[]).includes(name))
      throw new ManualRequestError(short(name), `unknown; ${MANUAL_PARAMETERS.join(', ')} accepted`);
  const { context, from, to, entities, full, webhookId, maxDeletes } = params;
  if (context === undefined || !CONTEXT_PATTERN.test(context))
    throw new ManualRequestError(
      'context',
      'required: a ContextIdentifier of 1 to 100 letters, digits, _ or -',
    );
  if (full !== undefined && full !== 'true' && full !== 'false')
    throw new ManualRequestError('full', `${short(full)}: true or false accepted`);
  const isFull = full === 'true';
  const window = { from: time('from', from), to: time('to', to) };
  if (window.from === undefined && !isFull)
    throw new ManualRequestError('from', `required unless full=true: ${ISO_ACCEPTED}`);
  if (window.from !== undefined && Date.parse(window.from) > now.getTime())
    throw new ManualRequestError('from', `${short(window.from)} is in the future`);
  if (window.from !== undefined && window.to !== undefined && Date.parse(window.to) < Date.parse(window.from))
    throw new ManualRequestError('to', `${short(window.to)} is before from`);
  const webhook = webhookId === undefined ? undefined : Number(webhookId);
  if (webhookId !== undefined && !(/^\d{1,16}$/.test(webhookId) && Number.isSafeInteger(webhook)))
    throw new ManualRequestError('webhookId', `${short(webhookId)}: a WebhookId (a whole number) accepted`);
  if (maxDeletes !== undefined && !/^\d{1,7}$/.test(maxDeletes))
    throw new ManualRequestError(
      'maxDeletes',
      `${short(maxDeletes)}: a whole number from 0 to 9999999 accepted`,
    );
  return {
    context,
    reason: 'manual',
    ...(window.from !== undefined && { from: window.from }),
    ...(window.to !== undefined && { to: window.to }),
    ...(isFull && { full: true }),
    ...(entities !== undefined && { entities: entityList(entities) }),
    ...(webhook !== undefined && { webhookId: webhook }),
    ...(maxDeletes !== undefined && { maxDeletes: Number(maxDeletes) }),
    requestedAt: new Date(Math.floor(now.getTime() / 60_000) * 60_000).toISOString(),
  };
}

function time(name: 'from' | 'to', value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!z.safeParse(IsoTime, value).success)
    throw new ManualRequestError(name, `${short(value)}: ${ISO_ACCEPTED}`);
  return value;
}

function entityList(value: string): string[] {
  const list = [...new Set(value.split(',').map((entity) => entity.trim()))];
  if (list.length === 0 || list.length > 100 || list.some((entity) => entity === ''))
    throw new ManualRequestError('entities', 'a comma-separated list of 1 to 100 entities accepted');
  for (const entity of list)
    if (crmTableOf(entity) === undefined)
      throw new ManualRequestError(
        'entities',
        `${short(entity)} cannot be reconciled (${whyNotInCrm(entity)}): ${Object.keys(CRM_TABLES).join(', ')}, list.<name> or y_<table> accepted`,
      );
  return list;
}

/** A value as echoed in an error: at most 64 characters. */
const short = (value: string) => (value.length > 64 ? `${value.slice(0, 64)}…` : value);
