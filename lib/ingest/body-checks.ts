import { isUtf8 } from 'node:buffer';
import { type DeliveryEvent, familyOf, familyOfEvent, parseDeliveryEvent } from '../events/index.js';
import { type Checked, type ContextBinding, type Decision, REGISTRATION_TEST_EVENT } from './decision.js';
import { envelopeView } from './envelope-view.js';
import type { DeliveryHeaders } from './headers.js';
import type { DeliveryPolicy } from './request.js';
import { routeEvent } from './routing.js';
import { storeMisfit } from './store-fit.js';
import { clip, messageOf, park, refuseOrPark, reject } from './verdicts.js';

/**
 * The part of `decide` (pipeline.ts) after the signature (or token) was checked: UTF-8, JSON, the context
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

/** The body as text when it is well-formed UTF-8 (a string without lone surrogates); else undefined. */
function asText(raw: string | Uint8Array): string | undefined {
  if (typeof raw === 'string') return raw.isWellFormed() ? raw : undefined;
  return isUtf8(raw) ? Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8') : undefined;
}
