import { isUtf8 } from 'node:buffer';
import { type DeliveryEvent, familyOf, familyOfEvent, parseDeliveryEvent } from '../events/index.js';
import { CONTEXT_CHARS } from '../events/primitives.js';
import type { DeliveryAttributes, OutboundMessage } from '../queue/port.js';
import {
  type Authentication,
  type Checked,
  type ContextBinding,
  type Decision,
  type LogFields,
  type ParkReason,
  REGISTRATION_TEST_EVENT,
  type RejectReason,
  type RejectStatus,
} from './decision.js';
import { type EnvelopeView, envelopeView } from './envelope-view.js';
import { type DeliveryHeaders, isJsonContentType, lowerCaseHeaders, readDeliveryHeaders } from './headers.js';
import type { DeliveryPolicy, DeliveryRequest } from './request.js';
import { routeEvent, routeParked } from './routing.js';
import { type SecretMatch, safeEqual } from './signature.js';
import { storeMisfit } from './store-fit.js';

/**
 * Decides what to do with a delivery, without doing it: reject it (with the status and a reason
 * safe to show), send one message to a queue (routed, or parked when an authentic body breaks the
 * spec), or acknowledge the CRM's registration check. Order of checks: method, size, content type,
 * headers, state token, signature over the raw bytes (before any parsing), then
 * {@link decideAuthenticated}: UTF-8, JSON, context binding of the signature, registration check,
 * schema, header and body agreement, age, store limits, ENTITIES.
 */
export function decide(request: DeliveryRequest, policy: DeliveryPolicy): Decision {
  const log: LogFields = { signatureVerified: false };

  if (request.method.toUpperCase() !== 'POST')
    return reject(log, 405, 'method-not-allowed', 'only POST is accepted');
  const raw = request.body;
  const size = typeof raw === 'string' ? Buffer.byteLength(raw) : raw.length;
  if (size === 0) return reject(log, 400, 'invalid-body', 'the body is empty');
  if (size > policy.maxBodyBytes) {
    return reject(
      log,
      413,
      'body-too-large',
      `the body is larger than ${policy.maxBodyBytes} bytes (MAX_BODY_BYTES)`,
    );
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

  let tokenVerified = false;
  if (headers.state !== undefined && policy.stateEventToken !== undefined) {
    const token = headers.receiverToken ?? request.query.token;
    if (token === undefined || !safeEqual(token, policy.stateEventToken)) {
      return reject(log, 401, 'state-token-invalid', 'webhook state deliveries need the receiver token');
    }
    tokenVerified = true;
  }

  let match: SecretMatch | undefined;
  if (headers.signature !== undefined && policy.verifier.hasSecrets) {
    match = policy.verifier.match(raw, headers.signature, contextHint(raw));
    if (match === undefined)
      return reject(log, 401, 'signature-invalid', 'the signature does not match the body');
    log.signatureVerified = true;
  }
  const authenticatedBy: Authentication =
    match !== undefined ? 'signature' : tokenVerified ? 'token' : 'none';
  const checked: Checked = {
    request,
    headers,
    log,
    authenticatedBy,
    attributes: deliveryAttributes(request, headers, log),
  };
  const binding: ContextBinding = (view) => {
    if (match === undefined) return unsignedBinding(checked, headers.state !== undefined, policy, view);
    if (view.context !== undefined && !policy.verifier.allows(view.context, match)) {
      return reject(
        log,
        401,
        'signature-wrong-context',
        'the signature is not valid for this ContextIdentifier',
      );
    }
    return undefined;
  };
  return decideAuthenticated(checked, policy, binding);
}

/**
 * The part of {@link decide} after the signature (or token) was checked: UTF-8, JSON, the context
 * binding, the registration check, the schema, header and body agreement, age, store limits and
 * ENTITIES. The replay of a parked delivery runs it again with today's code and configuration.
 */
export function decideAuthenticated(
  checked: Checked,
  policy: DeliveryPolicy,
  binding: ContextBinding,
): Decision {
  const { request, headers, log } = checked;
  const raw = request.body;
  const text = asText(raw);
  if (text === undefined) return refuseOrPark(checked, 'invalid-utf8', 'the body is not valid UTF-8');
  checked.text = text;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return refuseOrPark(checked, 'invalid-json', 'the body is not JSON');
  }
  const view = envelopeView(json);

  if (view.context !== undefined) log.contextIdentifier = clip(view.context);
  const unbound = binding(view);
  if (unbound !== undefined) return unbound;

  // The registration check, authenticated like any delivery above: answered 200 and not queued (it
  // carries no data). Its Timestamp and EventIds are not checked: a replayed check changes nothing.
  if (headers.event === REGISTRATION_TEST_EVENT && view.event === REGISTRATION_TEST_EVENT) {
    return { kind: 'test', log };
  }

  // The receiver's own snapshots come from its reconcile function only: refused, valid or not, never
  // parked (a parked one could be replayed onto a row's queue), whoever signed it. The CRM sends none.
  if (view.event !== undefined && familyOf(view.event)?.synthetic === true) {
    return reject(
      log,
      400,
      'synthetic-event',
      `${view.event.slice(0, 64)} is the receiver's own snapshot event: never accepted over HTTP`,
    );
  }
  const parsed = parseDeliveryEvent(json);
  if (!parsed.ok) return refuseOrPark(checked, parsed.reason, parsed.detail, view);
  const event = parsed.event;
  const mismatch = headerMismatch(headers, event);
  if (mismatch !== undefined) return refuseOrPark(checked, 'header-mismatch', mismatch, view);
  if (isTooOld(event.Timestamp, request.receivedAt, policy.maxEventAgeSeconds)) {
    return reject(
      log,
      400,
      'event-too-old',
      `the event Timestamp is older than MAX_EVENT_AGE_SECONDS (${policy.maxEventAgeSeconds} seconds)`,
    );
  }
  const skew = policy.maxClockSkewSeconds ?? 300;
  if (checked.authenticatedBy === 'none' && isFromFuture(event.Timestamp, request.receivedAt, skew)) {
    return reject(
      log,
      400,
      'event-from-future',
      `an unauthenticated event may be dated at most ${skew} seconds ahead (MAX_CLOCK_SKEW_SECONDS)`,
    );
  }
  // What the store can never hold is parked (refused when unauthenticated, as any unusable body).
  const misfit = storeMisfit(event, text);
  if (misfit !== undefined) return refuseOrPark(checked, misfit.reason, misfit.detail, view);
  const family = familyOfEvent(event);
  // A valid event of an entity ENTITIES leaves out is kept (parked, replayable), whoever sent it.
  if (family.effect !== 'state' && policy.entities !== undefined && !policy.entities(family.entity)) {
    return park(checked, 'entity-not-enabled', `ENTITIES does not include ${family.entity}`, view);
  }
  const olderShape =
    (family.effect === 'created' || family.effect === 'state') && event.FieldValues === undefined;
  return {
    kind: 'accept',
    message: messageOf(checked, routeEvent(event), undefined),
    log,
    ...(olderShape && { olderShape }),
  };
}

/**
 * An unsigned delivery goes on only when it is a state event (the token, if any, was checked before),
 * or when its context has no secret and ALLOW_UNSIGNED is on. A body without a ContextIdentifier string
 * has no context to show that, so it needs a signature (as the registration check does then too).
 */
export function unsignedBinding(
  checked: Checked,
  stateEvent: boolean,
  policy: DeliveryPolicy,
  view: EnvelopeView,
): Decision | undefined {
  if (stateEvent) return undefined;
  if (view.context === undefined) {
    return reject(
      checked.log,
      401,
      'signature-missing',
      'a valid signature header is required: the body has no ContextIdentifier string',
    );
  }
  if (policy.verifier.hasSecretFor(view.context)) {
    return reject(checked.log, 401, 'signature-missing', 'a valid signature header is required');
  }
  if (!policy.allowUnsigned) {
    return reject(
      checked.log,
      401,
      'no-secret-configured',
      'unsigned deliveries are not accepted for this ContextIdentifier',
    );
  }
  return undefined;
}

function reject(log: LogFields, status: RejectStatus, reason: RejectReason, detail: string): Decision {
  return { kind: 'reject', status, reason, detail, log };
}

/**
 * An authentic body that breaks the spec is parked (kept, answered 200, replayable); an
 * unauthenticated one is refused with 400 and never reaches a queue.
 */
function refuseOrPark(
  checked: Checked,
  reason: Exclude<ParkReason, 'entity-not-enabled'>,
  detail: string,
  view: EnvelopeView = {},
): Decision {
  if (checked.authenticatedBy === 'none') {
    const rejectReason: RejectReason =
      reason === 'invalid-utf8' || reason === 'invalid-json'
        ? 'invalid-body'
        : reason === 'unknown-event'
          ? 'invalid-event'
          : reason;
    return reject(checked.log, 400, rejectReason, detail);
  }
  return park(checked, reason, detail, view);
}

/** The delivery, kept on the parked queue with its reason (answered 200, replayable). */
function park(checked: Checked, reason: ParkReason, detail: string, view: EnvelopeView = {}): Decision {
  const route = routeParked(checked.request.body, view);
  const message = messageOf(checked, route, { reason, detail });
  return { kind: 'park', reason, detail, message, log: checked.log };
}

/**
 * What every message of a delivery carries: its headers' event and EventId, whether its signature was
 * verified, when it was received, the sender's version and retry count. A replay of a parked message
 * needs all of them.
 */
function deliveryAttributes(
  request: DeliveryRequest,
  headers: DeliveryHeaders,
  log: LogFields,
): DeliveryAttributes {
  const attributes: DeliveryAttributes = {
    event: headers.event,
    eventId: headers.eventId,
    signatureVerified: log.signatureVerified ? 'true' : 'false',
    receivedAt: request.receivedAt.toISOString(),
  };
  if (headers.userAgentVersion !== undefined) attributes.userAgentVersion = headers.userAgentVersion;
  if (headers.retry !== undefined && headers.retry !== '') attributes.retry = headers.retry;
  return attributes;
}

/** The message of a delivery: the body as received (as text when it is UTF-8), its keys and attributes. */
function messageOf(
  { request, attributes, text }: Checked,
  route: { queue: OutboundMessage['queue']; groupId: string; deduplicationId: string },
  parking: { reason: ParkReason; detail: string } | undefined,
): OutboundMessage {
  return { ...route, body: text ?? request.body, attributes: { ...attributes, ...parking } };
}

function headerMismatch(headers: DeliveryHeaders, event: DeliveryEvent): string | undefined {
  if (headers.eventId !== event.EventId) return 'the EventId header differs from the body EventId';
  const { state } = headers;
  if (state !== undefined) {
    if (state.bodyEvent !== event.Event) return 'the Event header differs from the body Event';
    if (state.webhookId !== event.PrimaryKey)
      return 'the webhook id in the Event header differs from PrimaryKey';
    return undefined;
  }
  if (headers.event !== event.Event) return 'the Event header differs from the body Event';
  return undefined;
}

/** True when a validated UTC Timestamp lies more than `maxAgeSeconds` before `receivedAt` (second precision, in the event's favour). */
function isTooOld(timestamp: string, receivedAt: Date, maxAgeSeconds: number): boolean {
  const limit = new Date((Math.floor(receivedAt.getTime() / 1000) - maxAgeSeconds - 1) * 1000).toISOString();
  return timestamp.slice(0, 19) < limit.slice(0, 19);
}

/** True when a validated UTC Timestamp lies more than `skewSeconds` after `receivedAt` (second precision). */
function isFromFuture(timestamp: string, receivedAt: Date, skewSeconds: number): boolean {
  const limit = new Date((Math.floor(receivedAt.getTime() / 1000) + skewSeconds + 1) * 1000).toISOString();
  return timestamp.slice(0, 19) > limit.slice(0, 19);
}

/** A header value in a log line, cut to 128 characters. */
function clip(value: string): string {
  return value.length > 128 ? `${value.slice(0, 128)}…` : value;
}

/** The body as text when it is well-formed UTF-8 (a string without lone surrogates); else undefined. */
function asText(raw: string | Uint8Array): string | undefined {
  if (typeof raw === 'string') return raw.isWellFormed() ? raw : undefined;
  return isUtf8(raw) ? Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8') : undefined;
}

const CONTEXT_HINT = new RegExp(String.raw`"ContextIdentifier"\s*:\s*"(${CONTEXT_CHARS})"`);

/**
 * The ContextIdentifier as the raw body seems to name it, read before any parse: only which secrets
 * the signature is checked against first. The parsed body's context is what the match is bound to.
 */
function contextHint(raw: string | Uint8Array): string | undefined {
  const text =
    typeof raw === 'string'
      ? raw
      : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('latin1');
  return CONTEXT_HINT.exec(text)?.[1];
}
