import { isUtf8 } from 'node:buffer';
import { checkDeliveryEvent, type DeliveryEvent, parseDeliveryEvent } from './events/index.js';
import {
  type DeliveryHeaders,
  isJsonContentType,
  lowerCaseHeaders,
  parseStateHeaderEvent,
  readDeliveryHeaders,
  userAgentVersion,
} from './headers.js';
import type { OutboundMessage, QueueSender } from './queue/port.js';
import { type Route, routeEvent, routeParked } from './routing.js';
import { type SecretMatch, type SignatureVerifier, safeEqual } from './signature.js';
import { type StoreMisfitReason, storeMisfit } from './store-fit.js';

/**
 * A request as any transport hands it over, headers in any case. The body is the raw bytes, or the
 * text when the transport already decoded it as UTF-8 (API Gateway does for JSON): signing and
 * forwarding a string uses its UTF-8 bytes, which are the bytes that were received.
 */
export interface DeliveryRequest {
  method: string;
  headers: Record<string, string | undefined>;
  query: Record<string, string | undefined>;
  body: string | Uint8Array;
  receivedAt: Date;
}

/** The checks the ingest applies, merged from configuration once. */
export interface DeliveryPolicy {
  verifier: SignatureVerifier;
  headerPrefix?: string | undefined;
  stateEventToken?: string | undefined;
  allowUnsigned: boolean;
  maxEventAgeSeconds: number;
  /**
   * How far in the future an unauthenticated event (a state event without STATE_EVENT_TOKEN, or an
   * ALLOW_UNSIGNED delivery) may be dated; a forged far-future Timestamp would otherwise win every
   * ordering comparison until a real, newer event arrives. Default 300.
   */
  maxClockSkewSeconds?: number;
  maxBodyBytes: number;
}

export type RejectReason =
  | 'method-not-allowed'
  | 'body-too-large'
  | 'unsupported-media-type'
  | 'bad-headers'
  | 'invalid-body'
  | 'invalid-event'
  | 'header-mismatch'
  | 'event-too-old'
  | 'event-from-future'
  | 'signature-missing'
  | 'signature-invalid'
  | 'signature-wrong-context'
  | 'no-secret-configured'
  | 'state-token-invalid'
  | StoreMisfitReason;

export type ParkReason =
  | 'unknown-event'
  | 'invalid-event'
  | 'invalid-json'
  | 'invalid-utf8'
  | 'header-mismatch'
  | StoreMisfitReason;

/** What the log lines of a request carry (never a secret or a signature). */
export interface LogFields {
  eventId?: string;
  event?: string;
  contextIdentifier?: string;
  signatureVerified: boolean;
}

export type Decision =
  | {
      kind: 'reject';
      status: 400 | 401 | 405 | 413 | 415;
      reason: RejectReason;
      detail: string;
      log: LogFields;
    }
  | { kind: 'accept'; message: OutboundMessage; log: LogFields }
  | { kind: 'park'; reason: ParkReason; detail: string; message: OutboundMessage; log: LogFields }
  | { kind: 'test'; log: LogFields };

/**
 * The event name of the CRM's registration check: when a webhook is saved, the service posts an
 * event `test` (headers and body, with `X-Hook-Test: true`) and saves the webhook only if the
 * answer is 200. It carries no data, and the service's documentation asks receivers to ignore it.
 */
export const REGISTRATION_TEST_EVENT = 'test';

/** The SQS limit for one message: body plus attributes. */
export const SQS_MAX_MESSAGE_BYTES = 1_048_576;

/** Characters SQS refuses in a message body or attribute (outside XML's Char production). */
const NOT_SQS_SAFE = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
const NOT_SQS_SAFE_ALL = new RegExp(NOT_SQS_SAFE.source, 'gu');

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  405: 'Method Not Allowed',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  503: 'Service Unavailable',
};

/**
 * Decides what to do with a delivery, without doing it: reject it (with the status and a reason
 * safe to show), or send one message to a queue (routed, or parked when an authentic body breaks
 * the spec), or acknowledge the CRM's registration check. Order of checks: method, size, content
 * type, headers, state token, signature over the raw bytes (before any parsing), UTF-8, JSON, context
 * binding of the signature, registration check, schema, header and body agreement, age, store limits. The
 * decision is synchronous, except for a body the generated schema check refuses: zod then judges it
 * (and is loaded the first time), so that a refusal keeps zod's issues.
 */
export function decide(request: DeliveryRequest, policy: DeliveryPolicy): Decision | Promise<Decision> {
  const log: LogFields = { signatureVerified: false };

  if (request.method !== 'POST' && request.method.toUpperCase() !== 'POST')
    return reject(log, 405, 'method-not-allowed', 'only POST is accepted');
  const raw = request.body;
  // A UTF-16 code unit takes at most 3 UTF-8 bytes: count exactly only when the bound is not enough.
  const size =
    typeof raw !== 'string'
      ? raw.length
      : raw.length * 3 <= policy.maxBodyBytes
        ? raw.length
        : Buffer.byteLength(raw);
  if (size === 0) return reject(log, 400, 'invalid-body', 'the body is empty');
  if (size > policy.maxBodyBytes) {
    return reject(log, 413, 'body-too-large', `the body is larger than ${policy.maxBodyBytes} bytes`);
  }
  const lower = lowerCaseHeaders(request.headers);
  if (!isJsonContentType(lower['content-type'])) {
    return reject(log, 415, 'unsupported-media-type', 'Content-Type must be application/json (UTF-8)');
  }
  const read = readDeliveryHeaders(lower, policy.headerPrefix);
  if (!read.ok) return reject(log, 400, 'bad-headers', read.detail);
  const headers = read.headers;
  log.eventId = clip(headers.eventId);
  log.event = clip(headers.event);

  const stateHeader = parseStateHeaderEvent(headers.event);
  let tokenVerified = false;
  if (stateHeader !== undefined && policy.stateEventToken !== undefined) {
    const token = headers.receiverToken ?? request.query.token;
    if (token === undefined || !safeEqual(token, policy.stateEventToken)) {
      return reject(log, 401, 'state-token-invalid', 'webhook state deliveries need the receiver token');
    }
    tokenVerified = true;
  }

  let match: SecretMatch | undefined;
  if (headers.signature !== undefined && policy.verifier.hasSecrets) {
    match = policy.verifier.match(raw, headers.signature);
    if (match === undefined)
      return reject(log, 401, 'signature-invalid', 'the signature does not match the body');
    log.signatureVerified = true;
  }
  const authentic = match !== undefined || tokenVerified;

  const text = asText(raw);
  if (text === undefined) {
    return authentic
      ? park(request, headers, log, 'invalid-utf8', 'the body is not valid UTF-8')
      : reject(log, 400, 'invalid-body', 'the body is not valid UTF-8');
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return authentic
      ? park(request, headers, log, 'invalid-json', 'the body is not JSON')
      : reject(log, 400, 'invalid-body', 'the body is not JSON');
  }

  const context = contextOf(json);
  if (context !== undefined) log.contextIdentifier = clip(context);
  if (match !== undefined) {
    if (context !== undefined && !policy.verifier.allows(context, match)) {
      return reject(
        log,
        401,
        'signature-wrong-context',
        'the signature is not valid for this ContextIdentifier',
      );
    }
  } else if (stateHeader === undefined) {
    if (context !== undefined && policy.verifier.hasSecretFor(context)) {
      return reject(log, 401, 'signature-missing', 'a valid signature header is required');
    }
    if (!policy.allowUnsigned) {
      return reject(
        log,
        401,
        'no-secret-configured',
        'unsigned deliveries are not accepted for this ContextIdentifier',
      );
    }
  }

  // The registration check, authenticated like any delivery above: answered 200 and not queued (it
  // carries no data). Its Timestamp and EventIds are not checked: a replayed check changes nothing.
  if (headers.event === REGISTRATION_TEST_EVENT && eventOf(json) === REGISTRATION_TEST_EVENT) {
    return { kind: 'test', log };
  }

  const event = checkDeliveryEvent(json);
  if (event === undefined) return refusedByCheck(request, policy, headers, log, text, json, authentic);
  return decideValid(request, policy, headers, log, text, event, authentic);
}

/**
 * A body the generated check refused: zod gives the verdict (loaded on the first refusal only) and,
 * for a refusal, the reason and detail. An authentic body is parked, an unauthenticated one refused.
 */
async function refusedByCheck(
  request: DeliveryRequest,
  policy: DeliveryPolicy,
  headers: DeliveryHeaders,
  log: LogFields,
  text: string,
  json: unknown,
  authentic: boolean,
): Promise<Decision> {
  const parsed = await parseDeliveryEvent(json);
  if (parsed.ok) return decideValid(request, policy, headers, log, text, parsed.event, authentic);
  return authentic
    ? park(request, headers, log, parsed.reason, parsed.detail, json)
    : reject(log, 400, 'invalid-event', parsed.detail);
}

/**
 * The checks after the schema (header and body agreement, age), then the message to queue; an event
 * the store can never hold is parked instead (refused when unauthenticated, as any unusable body).
 */
function decideValid(
  request: DeliveryRequest,
  policy: DeliveryPolicy,
  headers: DeliveryHeaders,
  log: LogFields,
  text: string,
  event: DeliveryEvent,
  authentic: boolean,
): Decision {
  const mismatch = headerMismatch(headers, event);
  if (mismatch !== undefined) {
    return authentic
      ? park(request, headers, log, 'header-mismatch', mismatch, event)
      : reject(log, 400, 'header-mismatch', mismatch);
  }
  if (isTooOld(event.Timestamp, request.receivedAt, policy.maxEventAgeSeconds)) {
    return reject(
      log,
      400,
      'event-too-old',
      `the event Timestamp is older than MAX_EVENT_AGE_SECONDS (${policy.maxEventAgeSeconds} seconds)`,
    );
  }
  const skew = policy.maxClockSkewSeconds ?? 300;
  if (!authentic && isFromFuture(event.Timestamp, request.receivedAt, skew)) {
    return reject(
      log,
      400,
      'event-from-future',
      `an unauthenticated event may be dated at most ${skew} seconds ahead`,
    );
  }
  const misfit = storeMisfit(event, text);
  if (misfit !== undefined) {
    return authentic
      ? park(request, headers, log, misfit.reason, misfit.detail, event)
      : reject(log, 400, misfit.reason, misfit.detail);
  }
  return enqueue(request, headers, log, text, routeEvent(event));
}

type RejectStatus = 400 | 401 | 405 | 413 | 415;

function reject(log: LogFields, status: RejectStatus, reason: RejectReason, detail: string): Decision {
  return { kind: 'reject', status, reason, detail, log };
}

/** The message of a validated event (its text as the body), or 413 when it cannot fit in one. */
function enqueue(
  request: DeliveryRequest,
  headers: DeliveryHeaders,
  log: LogFields,
  text: string,
  route: Route,
): Decision {
  const message = buildMessage(text, route, headers, request, log, undefined);
  return fits(message) ? { kind: 'accept', message, log } : tooLargeForQueue(log);
}

/** The parked message of an authentic body that breaks the spec (`body` when it parsed as JSON). */
function park(
  request: DeliveryRequest,
  headers: DeliveryHeaders,
  log: LogFields,
  reason: ParkReason,
  detail: string,
  body?: unknown,
): Decision {
  const parking = { reason, detail };
  const route = routeParked(request.body, body);
  const message = buildMessage(undefined, route, headers, request, log, parking);
  return fits(message) ? { kind: 'park', reason, detail, message, log } : tooLargeForQueue(log);
}

function fits(message: OutboundMessage): boolean {
  return messageBytes(message) <= SQS_MAX_MESSAGE_BYTES;
}

function tooLargeForQueue(log: LogFields): Decision {
  return reject(log, 413, 'body-too-large', 'the body does not fit in one queue message');
}

export interface DeliveryResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  decision: Decision;
  /** Milliseconds spent waiting for the queue, when a message was sent. */
  enqueueMs?: number;
  error?: unknown;
}

/**
 * Runs {@link decide} and, for accepted and parked deliveries, sends the message and answers 200
 * only once the queue acknowledged it (the registration check is answered 200 at once); a queue
 * failure answers 503 with Retry-After. The time budget belongs to the queue adapter (bounded
 * attempts and a deadline: `lib/queue/sqs.ts`).
 */
export async function handleDelivery(
  request: DeliveryRequest,
  policy: DeliveryPolicy,
  queue: QueueSender,
): Promise<DeliveryResponse> {
  const decided = decide(request, policy);
  // Only a body the generated check refuses waits for zod; every other decision is synchronous.
  const decision = decided instanceof Promise ? await decided : decided;
  if (decision.kind === 'reject') {
    const headers: Record<string, string> = { 'content-type': 'application/problem+json' };
    if (decision.status === 405) headers.allow = 'POST';
    return {
      status: decision.status,
      headers,
      body: problem(decision.status, decision.reason, decision.detail),
      decision,
    };
  }
  if (decision.kind === 'test') {
    return {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: '{"status":"test-acknowledged"}',
      decision,
    };
  }
  const started = performance.now();
  try {
    await queue.send(decision.message);
  } catch (error) {
    return {
      status: 503,
      headers: { 'content-type': 'application/problem+json', 'retry-after': '1' },
      body: problem(503, 'queue-unavailable', 'the delivery could not be queued; retry later'),
      decision,
      enqueueMs: performance.now() - started,
      error,
    };
  }
  return {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body:
      decision.kind === 'accept'
        ? // An accepted EventId is a validated GUID and the queue a fixed key: nothing to escape.
          `{"status":"accepted","eventId":"${decision.message.deduplicationId}","queue":"${decision.message.queue}"}`
        : JSON.stringify({ status: 'parked', eventId: decision.log.eventId, reason: decision.reason }),
    decision,
    enqueueMs: performance.now() - started,
  };
}

/** An RFC 9457 problem document. `detail` never carries a secret, a signature or body values. */
export function problem(status: number, reason: string, detail: string): string {
  return JSON.stringify({
    type: `urn:crm-webhook-receiver:problem:${reason}`,
    title: TITLES[status] ?? 'Error',
    status,
    detail,
  });
}

function headerMismatch(headers: DeliveryHeaders, event: DeliveryEvent): string | undefined {
  if (headers.eventId !== event.EventId) return 'the EventId header differs from the body EventId';
  const state = parseStateHeaderEvent(headers.event);
  if (state !== undefined) {
    if (state.bodyEvent !== event.Event) return 'the Event header differs from the body Event';
    if (state.webhookId !== event.PrimaryKey)
      return 'the webhook id in the Event header differs from PrimaryKey';
    return undefined;
  }
  if (headers.event !== event.Event) return 'the Event header differs from the body Event';
  return undefined;
}

let cutoffFor = Number.NaN;
let cutoffIso = '';

/**
 * True when a validated UTC Timestamp lies more than `maxAgeSeconds` before `receivedAt`. ISO 8601
 * UTC strings sort as time does, so the check is a string comparison with a cutoff built once per
 * second (seconds precision, rounded in the event's favour).
 */
function isTooOld(timestamp: string, receivedAt: Date, maxAgeSeconds: number): boolean {
  const limit = Math.floor(receivedAt.getTime() / 1000) - maxAgeSeconds - 1;
  if (limit !== cutoffFor) {
    cutoffFor = limit;
    cutoffIso = new Date(limit * 1000).toISOString().slice(0, 19);
  }
  return timestamp.slice(0, 19) < cutoffIso;
}

/** True when a validated UTC Timestamp lies more than `skewSeconds` after `receivedAt` (second precision). */
function isFromFuture(timestamp: string, receivedAt: Date, skewSeconds: number): boolean {
  const limit = new Date((Math.floor(receivedAt.getTime() / 1000) + skewSeconds + 1) * 1000).toISOString();
  return timestamp.slice(0, 19) > limit.slice(0, 19);
}

function contextOf(json: unknown): string | undefined {
  return stringField(json, 'ContextIdentifier');
}

function eventOf(json: unknown): string | undefined {
  return stringField(json, 'Event');
}

function stringField(json: unknown, name: string): string | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const value = (json as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

let isoSecond = Number.NaN;
let isoPrefix = '';

/** `date.toISOString()`, with the part up to the second built once per second. */
function isoTime(date: Date): string {
  const ms = date.getTime();
  const second = Math.floor(ms / 1000);
  if (second !== isoSecond) {
    isoSecond = second;
    isoPrefix = date.toISOString().slice(0, 20);
  }
  return `${isoPrefix}${String(ms - second * 1000).padStart(3, '0')}Z`;
}

function clip(value: string): string {
  return value.length > 128 ? `${value.slice(0, 128)}…` : value;
}

function attributeValue(value: string): string {
  return clip(value).replace(NOT_SQS_SAFE_ALL, '?');
}

/** The body as text when it is well-formed UTF-8 (a string without lone surrogates); else undefined. */
function asText(raw: string | Uint8Array): string | undefined {
  if (typeof raw === 'string') return raw.isWellFormed() ? raw : undefined;
  return isUtf8(raw) ? Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8') : undefined;
}

function bytesOf(raw: string | Uint8Array): Buffer {
  return typeof raw === 'string'
    ? Buffer.from(raw, 'utf8')
    : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
}

/**
 * True when `text` can travel as an SQS body. `validJson` skips the full scan: a JSON text that
 * parsed has no raw control characters, so only the two non-characters U+FFFE and U+FFFF remain.
 */
function isSqsSafe(text: string, validJson: boolean): boolean {
  if (validJson) return !text.includes('\uFFFE') && !text.includes('\uFFFF');
  return !NOT_SQS_SAFE.test(text);
}

function buildMessage(
  /** The text of a valid JSON body (accepted events); undefined for parked bodies. */
  jsonText: string | undefined,
  route: Route,
  headers: DeliveryHeaders,
  request: DeliveryRequest,
  log: LogFields,
  parking: { reason: ParkReason; detail: string } | undefined,
): OutboundMessage {
  // An accepted delivery's headers matched the validated body (a GUID and an event name of the
  // spec): they need no clipping or replacing. Parked ones may carry anything.
  const checked = jsonText !== undefined;
  const attributes: Record<string, string> = {
    event: checked ? headers.event : attributeValue(headers.event),
    eventId: checked ? headers.eventId : attributeValue(headers.eventId),
    signatureVerified: log.signatureVerified ? 'true' : 'false',
    receivedAt: isoTime(request.receivedAt),
  };
  const version = userAgentVersion(headers.userAgent);
  if (version !== undefined) attributes.userAgentVersion = version;
  if (headers.retry !== undefined && headers.retry !== '') attributes.retry = attributeValue(headers.retry);
  if (parking !== undefined) {
    attributes.reason = parking.reason;
    attributes.detail = attributeValue(parking.detail.slice(0, 1000));
  }
  const raw = request.body;
  let body = jsonText ?? asText(raw);
  if (body === undefined || !isSqsSafe(body, checked)) {
    // SQS only carries XML characters: keep the exact bytes, base64-encoded, and say so.
    body = bytesOf(raw).toString('base64');
    attributes.bodyEncoding = 'base64';
  }
  return {
    queue: route.queue,
    body,
    groupId: route.groupId,
    deduplicationId: route.deduplicationId,
    attributes,
  };
}

/**
 * Size of a message as SQS counts it, body plus attribute names, types and values: an upper bound
 * (3 bytes per UTF-16 unit) when that is within the limit, else the exact count.
 */
function messageBytes(message: OutboundMessage): number {
  let bound = message.body.length * 3;
  for (const name in message.attributes) {
    bound += name.length + 'String'.length + message.attributes[name]!.length * 3;
  }
  if (bound <= SQS_MAX_MESSAGE_BYTES) return bound;
  let size = Buffer.byteLength(message.body);
  for (const name in message.attributes) {
    size += name.length + 'String'.length + Buffer.byteLength(message.attributes[name]!);
  }
  return size;
}
