import {
  ACTIVE,
  WEBHOOK_STATE_BY_EVENT,
  WEBHOOK_STATE_NAMES,
  type WebhookStateEvent,
} from './events/index.js';
import { eventSeq } from './model/order-key.js';
import type { Gap, LastAccepted, StateTransition, Webhook } from './model/types.js';

/** State events kept per webhook; older ones are dropped (a webhook flapping that often has other problems). */
export const MAX_TRANSITIONS = 200;

export interface StateApplyOptions {
  /** The newest row event accepted for the context under the event's WebhookName, if any. */
  lastAccepted?: LastAccepted | undefined;
}

/**
 * Merges one webhook state event into the webhook's record. Pure and order-insensitive like
 * {@link import('./projection.js').apply}: the state comes from the event *name* of the newest event
 * (started → 0 Active, stopped → 1 Stopped, errors → 2 TooManyErrors; FieldValues.state is only
 * recorded as `reportedState`), the registration fields from the newest event that carried
 * FieldValues (older CRM versions send none), and every event is kept
 * as a transition so gaps and `stateChangedAt` come out the same whatever the arrival order.
 *
 * Returns the same object when the event is already known.
 */
export function applyStateEvent(
  webhook: Webhook | undefined,
  event: WebhookStateEvent,
  options: StateApplyOptions = {},
): Webhook {
  const seq = eventSeq(event);
  const known = webhook?.transitions ?? [];
  if (known.some((transition) => transition.seq === seq)) return webhook!;
  const oldest = known[0];
  if (known.length >= MAX_TRANSITIONS && oldest !== undefined && seq < oldest.seq) return webhook!;

  const state = WEBHOOK_STATE_BY_EVENT[event.Event];
  const transition: StateTransition = { seq, eventId: event.EventId, timestamp: event.Timestamp, state };
  if (state !== ACTIVE) transition.gapFrom = gapStart(event.Timestamp, seq, options.lastAccepted);
  const transitions = [...known, transition]
    .sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0))
    .slice(-MAX_TRANSITIONS);

  const newest = webhook === undefined || seq > webhook.lastSeq;
  const base: Webhook = newest ? { ...webhook, ...fromEvent(event, seq) } : webhook;
  return {
    ...base,
    ...registration(webhook, event, seq),
    transitions,
    stateChangedAt: stateChangedAt(transitions),
    eventCount: (webhook?.eventCount ?? 0) + 1,
  };
}

function fromEvent(event: WebhookStateEvent, seq: string): Webhook {
  const state = WEBHOOK_STATE_BY_EVENT[event.Event];
  return {
    context: event.ContextIdentifier,
    webhookId: event.PrimaryKey,
    webhookName: event.WebhookName,
    state,
    stateName: WEBHOOK_STATE_NAMES[state],
    lastEventId: event.EventId,
    lastTimestamp: event.Timestamp,
    lastSeq: seq,
    stateChangedAt: event.Timestamp,
    eventCount: 0,
    transitions: [],
  };
}

/**
 * The registration fields when this event's FieldValues are the newest seen, else nothing: an event
 * without FieldValues (older CRM versions) keeps those of an earlier one. Items written before
 * `registrationSeq` took them from their newest event.
 */
function registration(webhook: Webhook | undefined, event: WebhookStateEvent, seq: string): Partial<Webhook> {
  const values = event.FieldValues;
  if (values === undefined) return {};
  const current =
    webhook?.registrationSeq ?? (webhook?.reportedState !== undefined ? webhook.lastSeq : undefined);
  if (current !== undefined && seq < current) return {};
  return {
    reportedState: values.state,
    events: values.events,
    registered: values.registered,
    registeredAssociateId: values.registered_associate_id,
    updated: values.updated,
    updatedAssociateId: values.updated_associate_id,
    registrationSeq: seq,
  };
}

/** The last accepted row event if it is older than the state event, else the state event itself. */
function gapStart(timestamp: string, seq: string, lastAccepted: LastAccepted | undefined): string {
  return lastAccepted !== undefined && lastAccepted.seq < seq ? lastAccepted.timestamp : timestamp;
}

/** Timestamp of the first event of the final run of equal states. */
function stateChangedAt(transitions: StateTransition[]): string {
  let index = transitions.length - 1;
  const current = transitions[index]!;
  while (index > 0 && transitions[index - 1]!.state === current.state) index--;
  return transitions[index]!.timestamp;
}

/**
 * The windows in which a webhook was not Active, oldest first. A gap opens at the first state event
 * that leaves Active (a webhook first seen Stopped counts as having left Active) and closes at the next
 * started event; an open gap has no `closedAt`. `openedAt` errs early, never late: re-fetching from
 * there cannot miss a change.
 */
export function gapsOf(webhook: Webhook): Gap[] {
  const gaps: Gap[] = [];
  let open: Gap | undefined;
  for (const transition of webhook.transitions) {
    if (transition.state !== ACTIVE && open === undefined) {
      open = {
        context: webhook.context,
        webhookId: webhook.webhookId,
        webhookName: webhook.webhookName,
        openedAt: transition.gapFrom ?? transition.timestamp,
        openedByEventId: transition.eventId,
      };
      gaps.push(open);
    } else if (transition.state === ACTIVE && open !== undefined) {
      open.closedAt = transition.timestamp;
      open.closedByEventId = transition.eventId;
      open = undefined;
    }
  }
  return gaps;
}
