import type { OutboundMessage } from '../queue/port.js';
import type { Checked, Decision, LogFields, ParkReason, RejectReason, RejectStatus } from './decision.js';
import type { EnvelopeView } from './envelope-view.js';
import { routeParked } from './routing.js';

/** A refusal: the status and a reason safe to show the sender. */
export function reject(log: LogFields, status: RejectStatus, reason: RejectReason, detail: string): Decision {
  return { kind: 'reject', status, reason, detail, log };
}

/**
 * An authentic body that breaks the spec is parked (kept, answered 200, replayable); an
 * unauthenticated one is refused with 400 and never reaches a queue.
 */
export function refuseOrPark(
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
export function park(
  checked: Checked,
  reason: ParkReason,
  detail: string,
  view: EnvelopeView = {},
): Decision {
  const route = routeParked(checked.request.body, view);
  const message = messageOf(checked, route, { reason, detail });
  return { kind: 'park', reason, detail, message, log: checked.log };
}

/** The message of a delivery: the body as received (as text when it is UTF-8), its keys and attributes. */
export function messageOf(
  { request, attributes, text }: Checked,
  route: { queue: OutboundMessage['queue']; groupId: string; deduplicationId: string },
  parking: { reason: ParkReason; detail: string } | undefined,
): OutboundMessage {
  return { ...route, body: text ?? request.body, attributes: { ...attributes, ...parking } };
}

/** A value in a decision's log fields (a header, the context), cut to 128 characters. */
export function clip(value: string): string {
  return value.length > 128 ? `${value.slice(0, 128)}…` : value;
}
