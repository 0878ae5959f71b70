/** What the delivery headers say, read case-insensitively under one detected (or pinned) prefix. */
export interface DeliveryHeaders {
  /** Lower-cased prefix without the trailing dash, e.g. `x-superoffice`. */
  prefix: string;
  event: string;
  eventId: string;
  signature: string | undefined;
  retry: string | undefined;
  contentType: string | undefined;
  userAgent: string | undefined;
  receiverToken: string | undefined;
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

/** The prefix of a header name that ends in `-event`, `-eventid` or `-signature`, else undefined. */
function prefixOf(name: string): string | undefined {
  // Cheap first test on the last character: most headers end in none of these suffixes.
  const last = name.charCodeAt(name.length - 1);
  if (last === 116 /* t */ && name.length > 6 && name.endsWith('-event')) return name.slice(0, -6);
  if (last === 100 /* d */ && name.length > 8 && name.endsWith('-eventid')) return name.slice(0, -8);
  if (last === 101 /* e */ && name.length > 10 && name.endsWith('-signature')) return name.slice(0, -10);
  return undefined;
}

/** True when `name` is `<prefix>-event`, `<prefix>-eventid` or `<prefix>-signature`. */
function hasPrefix(name: string, prefix: string): boolean {
  const rest = name.length - prefix.length;
  const suffix = rest === 6 ? '-event' : rest === 8 ? '-eventid' : rest === 10 ? '-signature' : undefined;
  return suffix !== undefined && name.endsWith(suffix) && name.startsWith(prefix);
}

interface HeaderNames {
  event: string;
  eventId: string;
  signature: string;
  retry: string;
}

const namesByPrefix = new Map<string, HeaderNames>();

/** The header names under one prefix, built once per prefix seen (a sender uses one or two). */
function headerNames(prefix: string): HeaderNames {
  let names = namesByPrefix.get(prefix);
  if (names === undefined) {
    names = {
      event: `${prefix}-event`,
      eventId: `${prefix}-eventid`,
      signature: `${prefix}-signature`,
      retry: `${prefix}-retry`,
    };
    if (namesByPrefix.size < 16) namesByPrefix.set(prefix, names);
  }
  return names;
}

/**
 * Finds the service's header prefix from the names that end in `-Event`, `-EventId` and
 * `-Signature`, in any capitalisation, or uses `pinnedPrefix` (for example `X-SuperOffice`).
 * Two different candidate prefixes in one request are refused: which one to trust is ambiguous.
 */
export function readDeliveryHeaders(lower: LowerCaseHeaders, pinnedPrefix?: string): HeaderResult {
  let prefix = pinnedPrefix?.toLowerCase().replace(/-+$/, '');
  if (prefix === undefined) {
    let others: Set<string> | undefined;
    for (const name in lower) {
      if (lower[name] === undefined) continue;
      // The usual case, a second header under the prefix already found: no slice to compare.
      if (prefix !== undefined && hasPrefix(name, prefix)) continue;
      const candidate = prefixOf(name);
      if (candidate === undefined || candidate === prefix) continue;
      if (prefix === undefined) prefix = candidate;
      else {
        others ??= new Set([prefix]);
        others.add(candidate);
      }
    }
    if (others !== undefined) {
      return { ok: false, detail: `headers use more than one prefix (${[...others].sort().join(', ')})` };
    }
    if (prefix === undefined) return { ok: false, detail: 'the -Event and -EventId headers are missing' };
  }
  const names = headerNames(prefix);
  const event = lower[names.event];
  const eventId = lower[names.eventId];
  if (event === undefined || event === '') return { ok: false, detail: `header ${names.event} is missing` };
  if (eventId === undefined || eventId === '')
    return { ok: false, detail: `header ${names.eventId} is missing` };
  return {
    ok: true,
    headers: {
      prefix,
      event,
      eventId,
      signature: lower[names.signature],
      retry: lower[names.retry],
      contentType: lower['content-type'],
      userAgent: lower['user-agent'],
      receiverToken: lower['x-receiver-token'],
    },
  };
}

const STATE_EVENT = /^webhook(\d+)\.(started|stopped|errors)$/;

/** `webhook123.errors` → `{ webhookId: 123, bodyEvent: 'webhook.errors' }`; anything else → undefined. */
export function parseStateHeaderEvent(event: string): { webhookId: number; bodyEvent: string } | undefined {
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
  // A sender sends the same agent on every delivery: remember the last answer.
  if (userAgent !== lastAgent) {
    lastAgent = userAgent;
    lastVersion = /-Webhook\/([0-9A-Za-z.+-]{1,64})\s*$/i.exec(userAgent)?.[1];
  }
  return lastVersion;
}

let lastAgent: string | undefined;
let lastVersion: string | undefined;

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
