import { CONTEXT_CHARS } from '../events/primitives.js';
import type { DeliveryAttributes } from '../queue/port.js';
import { decideAuthenticated } from './body-checks.js';
import type { Authentication, Checked, ContextBinding, Decision, LogFields } from './decision.js';
import type { EnvelopeView } from './envelope-view.js';
import { type DeliveryHeaders, isJsonContentType, lowerCaseHeaders, readDeliveryHeaders } from './headers.js';
import type { DeliveryPolicy, DeliveryRequest } from './request.js';
import { type SecretMatch, safeEqual } from './signature.js';
import { clip, reject } from './verdicts.js';

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
