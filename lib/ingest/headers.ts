/** What the delivery headers say, read case-insensitively under one detected (or pinned) prefix. */
export interface DeliveryHeaders {
  /** Lower-cased prefix without the trailing dash, e.g. `x-superoffice`. */
  prefix: string;
  event: string;
  eventId: string;
  signature: string | undefined;
  retry: string | undefined;
  contentType: string | undefined;
  /** The sender's version from its User-Agent ({@link userAgentVersion}). */
  userAgentVersion: string | undefined;
  receiverToken: string | undefined;
  /** The webhook state event the Event header names ({@link parseStateHeaderEvent}), else undefined. */
  state: StateHeaderEvent | undefined;
}

/** A webhook state event as its header names it: `webhook123.errors`. */
export interface StateHeaderEvent {
  webhookId: number;
  /** The Event its body carries: `webhook.errors`. */
  bodyEvent: string;
}

export type HeaderResult = { ok: true; headers: DeliveryHeaders } | { ok: false; detail: string };

/** Header names in lower case mapped to their values. */
export type LowerCaseHeaders = Readonly<Record<string, string | undefined>>;

/**
 * Header names in lower case. API Gateway (payload 2.0) already lower-cases them, and then the object
 * is used as it is; otherwise a copy is made, and a name given twice in different case keeps both
 * values, comma-joined as API Gateway joins repeated headers.
 */
export function lowerCaseHeaders(headers: Record<string, string | undefined>): LowerCaseHeaders {
  for (const name in headers) {
    if (name !== name.toLowerCase()) return lowerCaseCopy(headers);
  }
  return headers;
}

function lowerCaseCopy(headers: Record<string, string | undefined>): LowerCaseHeaders {
  const lower: Record<string, string> = Object.create(null);
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    const key = name.toLowerCase();
    const previous = lower[key];
    lower[key] = previous === undefined ? value : `${previous},${value}`;
  }
  return lower;
}

interface HeaderNames {
  event: string;
  eventId: string;
  signature: string;
  retry: string;
}

/** The header names under one prefix. */
function headerNames(prefix: string): HeaderNames {
  return {
    event: `${prefix}-event`,
    eventId: `${prefix}-eventid`,
    signature: `${prefix}-signature`,
    retry: `${prefix}-retry`,
  };
}

/** Present and not empty. */
function has(value: string | undefined): value is string {
  return value !== undefined && value !== '';
}

/**
 * The prefixes that carry a delivery: those with both a `-event` and an `-eventid` header. A custom
 * header of the webhook such as `X-Tenant-Event` is not a set, and is ignored.
 */
function completePrefixes(lower: LowerCaseHeaders): string[] {
  const prefixes: string[] = [];
  for (const name in lower) {
    if (name.length <= 8 || !name.endsWith('-eventid') || !has(lower[name])) continue;
    const prefix = name.slice(0, -8);
    if (has(lower[headerNames(prefix).event])) prefixes.push(prefix);
  }
  return prefixes;
}

/** The first of several complete sets when they all say the same (event, event id, and signature if any). */
function agreeing(lower: LowerCaseHeaders, prefixes: string[]): string | undefined {
  const sets = prefixes.map((prefix) => ({ prefix, names: headerNames(prefix) }));
  const [first] = sets;
  const signed = sets.find(({ names }) => lower[names.signature] !== undefined);
  for (const { names } of sets) {
    const signature = lower[names.signature];
    if (
      lower[names.event] !== lower[first!.names.event] ||
      lower[names.eventId] !== lower[first!.names.eventId] ||
      (signature !== undefined && signature !== lower[signed!.names.signature])
    )
      return undefined;
  }
  return (signed ?? first)?.prefix;
}

/**
 * Finds the service's header prefix, or uses `pinnedPrefix` (for example `X-SuperOffice`). Detected,
 * it is the prefix that carries the delivery: both `<prefix>-Event` and `<prefix>-EventId`, in any
 * capitalisation; other headers ending in `-Event` (a webhook's custom header) are ignored. Two
 * complete sets are refused only when they disagree.
 */
export function readDeliveryHeaders(lower: LowerCaseHeaders, pinnedPrefix?: string): HeaderResult {
  let prefix = pinnedPrefix?.toLowerCase().replace(/-+$/, '');
  if (prefix === undefined) {
    const prefixes = completePrefixes(lower);
    if (prefixes.length === 0) return { ok: false, detail: missingDetail(lower) };
    prefix = prefixes.length === 1 ? prefixes[0] : agreeing(lower, prefixes);
    if (prefix === undefined) {
      return {
        ok: false,
        detail: `two header sets disagree on the delivery (${prefixes.sort().join(', ')})`,
      };
    }
  }
  const names = headerNames(prefix);
  const event = lower[names.event];
  const eventId = lower[names.eventId];
  if (!has(event)) return { ok: false, detail: `header ${names.event} is missing` };
  if (!has(eventId)) return { ok: false, detail: `header ${names.eventId} is missing` };
  return {
    ok: true,
    headers: {
      prefix,
      event,
      eventId,
      signature: lower[names.signature],
      retry: lower[names.retry],
      contentType: lower['content-type'],
      userAgentVersion: userAgentVersion(lower['user-agent']),
      receiverToken: lower['x-receiver-token'],
      state: parseStateHeaderEvent(event),
    },
  };
}

/** Why no prefix carries a delivery: names the missing half of a set that has the other half. */
function missingDetail(lower: LowerCaseHeaders): string {
  for (const name in lower) {
    if (!has(lower[name])) continue;
    if (name.length > 8 && name.endsWith('-eventid')) return `header ${name.slice(0, -8)}-event is missing`;
  }
  for (const name in lower) {
    if (!has(lower[name])) continue;
    if (name.length > 6 && name.endsWith('-event')) return `header ${name.slice(0, -6)}-eventid is missing`;
  }
  return 'the -Event and -EventId headers are missing';
}

const STATE_EVENT = /^webhook(\d+)\.(started|stopped|errors)$/;

/** `webhook123.errors` → `{ webhookId: 123, bodyEvent: 'webhook.errors' }`; anything else → undefined. */
export function parseStateHeaderEvent(event: string): StateHeaderEvent | undefined {
  if (!event.startsWith('webhook')) return undefined;
  const match = STATE_EVENT.exec(event);
  if (match === null) return undefined;
  const webhookId = Number(match[1]);
  if (!Number.isSafeInteger(webhookId)) return undefined;
  return { webhookId, bodyEvent: `webhook.${match[2]}` };
}

/** `NetServer-Webhook/10.3.5` → `10.3.5`; undefined when the agent does not end in `-Webhook/<version>`. */
export function userAgentVersion(userAgent: string | undefined): string | undefined {
  if (userAgent === undefined) return undefined;
  return /-Webhook\/([0-9A-Za-z.+-]{1,64})\s*$/i.exec(userAgent)?.[1];
}

/**
 * True for `application/json` and `application/*+json`, with no charset or a UTF-8 one: the body
 * bytes are signed and forwarded as UTF-8 text.
 */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  if (contentType === 'application/json; charset=utf-8' || contentType === 'application/json') return true;
  const [mediaType = '', ...params] = contentType.split(';');
  const type = mediaType.trim().toLowerCase();
  if (type !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(type)) return false;
  for (const param of params) {
    const [name = '', value = ''] = param.split('=');
    if (name.trim().toLowerCase() !== 'charset') continue;
    const charset = value.trim().replace(/^"|"$/g, '').toLowerCase();
    if (charset !== 'utf-8' && charset !== 'utf8') return false;
  }
  return true;
}
