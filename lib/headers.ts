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

const SUFFIXES = ['-eventid', '-event', '-signature'] as const;

/** Lower-cases header names; a name given twice with different case keeps both values, comma-joined. */
export function lowerCaseHeaders(headers: Record<string, string | undefined>): Map<string, string> {
  const lower = new Map<string, string>();
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    const key = name.toLowerCase();
    const previous = lower.get(key);
    lower.set(key, previous === undefined ? value : `${previous},${value}`);
  }
  return lower;
}

/**
 * Finds the service's header prefix from the names that end in `-Event`, `-EventId` and
 * `-Signature`, in any capitalisation, or uses `pinnedPrefix` (for example `X-SuperOffice`).
 * Two different candidate prefixes in one request are refused: which one to trust is ambiguous.
 */
export function readDeliveryHeaders(lower: Map<string, string>, pinnedPrefix?: string): HeaderResult {
  let prefix = pinnedPrefix?.toLowerCase().replace(/-+$/, '');
  if (prefix === undefined) {
    const candidates = new Set<string>();
    for (const name of lower.keys()) {
      for (const suffix of SUFFIXES) {
        if (name.endsWith(suffix) && name.length > suffix.length) {
          candidates.add(name.slice(0, -suffix.length));
          break;
        }
      }
    }
    if (candidates.size > 1) {
      return { ok: false, detail: `headers use more than one prefix (${[...candidates].sort().join(', ')})` };
    }
    prefix = candidates.values().next().value;
    if (prefix === undefined) return { ok: false, detail: 'the -Event and -EventId headers are missing' };
  }
  const event = lower.get(`${prefix}-event`);
  const eventId = lower.get(`${prefix}-eventid`);
  if (event === undefined || event === '') return { ok: false, detail: `header ${prefix}-event is missing` };
  if (eventId === undefined || eventId === '')
    return { ok: false, detail: `header ${prefix}-eventid is missing` };
  return {
    ok: true,
    headers: {
      prefix,
      event,
      eventId,
      signature: lower.get(`${prefix}-signature`),
      retry: lower.get(`${prefix}-retry`),
      contentType: lower.get('content-type'),
      userAgent: lower.get('user-agent'),
      receiverToken: lower.get('x-receiver-token'),
    },
  };
}

const STATE_EVENT = /^webhook(\d+)\.(started|stopped|errors)$/;

/** `webhook123.errors` → `{ webhookId: 123, bodyEvent: 'webhook.errors' }`; anything else → undefined. */
export function parseStateHeaderEvent(event: string): { webhookId: number; bodyEvent: string } | undefined {
  const match = STATE_EVENT.exec(event);
  if (match === null) return undefined;
  const webhookId = Number(match[1]);
  if (!Number.isSafeInteger(webhookId)) return undefined;
  return { webhookId, bodyEvent: `webhook.${match[2]}` };
}

/** `NetServer-Webhook/10.3.5` → `10.3.5`; undefined when the agent does not end in `-Webhook/<version>`. */
export function userAgentVersion(userAgent: string | undefined): string | undefined {
  if (userAgent === undefined) return undefined;
  const match = /-Webhook\/([0-9A-Za-z.+-]{1,64})\s*$/i.exec(userAgent);
  return match?.[1];
}

/**
 * True for `application/json` and `application/*+json`, with no charset or a UTF-8 one: the body
 * bytes are signed and forwarded as UTF-8 text.
 */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
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
