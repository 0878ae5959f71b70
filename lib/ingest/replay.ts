import type { DeliveryAttributes, OutboundMessage, ParkedMessage } from '../queue/port.js';
import { decideAuthenticated } from './body-checks.js';
import type { Authentication, Checked } from './decision.js';
import { parseStateHeaderEvent } from './headers.js';
import { unsignedBinding } from './pipeline.js';
import type { DeliveryPolicy } from './request.js';

/** What to do with a parked message now: send it to its queue, or keep it parked with today's reason. */
export type ReplayOutcome =
  | { kind: 'replay'; message: OutboundMessage }
  | { kind: 'keep'; reason: string; message: OutboundMessage };

/** Attributes the parked queue adds that a replayed or re-parked message must not carry over. */
const PARKING_ATTRIBUTES = new Set<string>([
  'reason',
  'detail',
  'replayedAt',
] satisfies (keyof DeliveryAttributes)[]);

/**
 * Decides a parked delivery again with today's code and configuration ({@link decideAuthenticated}:
 * the schema, the registry, ENTITIES, the age as of its original `receivedAt`, the store limits). The
 * signature was verified at the ingest over these very bytes and its binding to the body's
 * ContextIdentifier checked then (a body without one was never bound, and is never routed); an
 * unsigned one meets today's ALLOW_UNSIGNED and secrets. A routed message keeps its EventId as its
 * deduplication id, its original attributes (`receivedAt` among them) and gains `replayedAt`; a
 * message that still does not route is re-parked with its reason brought up to date, as the copy that
 * replaces it ({@link copyId}).
 *
 * @example replayDecision(parked, policy, new Date()) // { kind: 'replay', message: { queue: 'entities', ... } }
 */
export function replayDecision(
  parked: ParkedMessage,
  policy: DeliveryPolicy,
  replayedAt: Date,
): ReplayOutcome {
  const base = Object.fromEntries(
    Object.entries(parked.attributes).filter(([name]) => !PARKING_ATTRIBUTES.has(name)),
  );
  const attributes = { ...base, replayedAt: replayedAt.toISOString() };
  const headerEvent = parked.attributes.event ?? '';
  const state = parseStateHeaderEvent(headerEvent);
  const authenticatedBy = authenticationOf(parked.attributes, state !== undefined);
  const receivedAt = new Date(parked.attributes.receivedAt ?? replayedAt.toISOString());
  const checked: Checked = {
    request: {
      method: 'POST',
      headers: {},
      query: {},
      body: parked.body,
      receivedAt: Number.isNaN(receivedAt.getTime()) ? replayedAt : receivedAt,
    },
    headers: {
      prefix: '',
      event: headerEvent,
      eventId: parked.attributes.eventId ?? '',
      signature: undefined,
      retry: parked.attributes.retry,
      contentType: undefined,
      userAgentVersion: parked.attributes.userAgentVersion,
      receiverToken: undefined,
      state,
    },
    log: { signatureVerified: authenticatedBy === 'signature' },
    authenticatedBy,
    attributes: base,
  };
  const decision = decideAuthenticated(checked, policy, (view) => {
    if (authenticatedBy === 'none') return unsignedBinding(checked, state !== undefined, policy, view);
    return undefined;
  });
  if (decision.kind === 'accept') {
    return { kind: 'replay', message: { ...decision.message, attributes } };
  }
  const [reason, detail] =
    decision.kind === 'test'
      ? ['registration-test', 'the registration check carries no data']
      : [decision.reason, decision.detail];
  return {
    kind: 'keep',
    reason,
    message: {
      queue: 'parked',
      body: parked.body,
      groupId: parked.groupId,
      deduplicationId: copyId(parked.messageId),
      attributes: { ...attributes, reason, detail },
    },
  };
}

/**
 * A parked message exactly as it is (body, group, attributes: reason and times included), as the copy
 * that replaces it: what a replay puts back in place of a message it received and does not decide, so
 * that the receive does not count toward the parked queue's maxReceiveCount.
 */
export function parkedCopy(parked: ParkedMessage): OutboundMessage {
  return {
    queue: 'parked',
    body: parked.body,
    groupId: parked.groupId,
    deduplicationId: copyId(parked.messageId),
    attributes: parked.attributes,
  };
}

/**
 * The deduplication id of any copy that replaces parked message `messageId` (re-parked with today's
 * reason, or put back unchanged). Every copy of one message gets the same id, so two replays that both
 * replace it within FIFO's 5-minute window queue one copy between them; a copy of another message
 * never gets it, since MessageIds are unique. Neither an EventId nor the ingest's SHA-256 of a body
 * (64 hex digits) has this form.
 *
 * @example copyId('6f1c…') === 'copy-of:6f1c…'
 */
export function copyId(messageId: string): string {
  return `copy-of:${messageId}`;
}

/**
 * What the ingest proved when it parked the message: its signature (`signatureVerified`), else the
 * state-event token for a state event (an unauthenticated state event is never parked), else
 * nothing (an ALLOW_UNSIGNED delivery of an entity ENTITIES left out).
 */
function authenticationOf(attributes: Readonly<DeliveryAttributes>, stateEvent: boolean): Authentication {
  if (attributes.signatureVerified === 'true') return 'signature';
  return stateEvent ? 'token' : 'none';
}
