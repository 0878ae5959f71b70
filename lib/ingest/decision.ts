import type { DeliveryAttributes, OutboundMessage } from '../queue/port.js';
import type { EnvelopeView } from './envelope-view.js';
import type { DeliveryHeaders } from './headers.js';
import type { DeliveryRequest } from './request.js';
import type { StoreMisfitReason } from './store-fit.js';

/*
 * What the ingest decides about a delivery (pipeline.ts and body-checks.ts decide it, verdicts.ts
 * builds it, handle.ts carries it out, answers.ts says it to the sender): the decision, its reasons,
 * and what a decided request carries.
 */

export type RejectReason =
  | 'method-not-allowed'
  | 'body-too-large'
  | 'unsupported-media-type'
  | 'bad-headers'
  | 'invalid-body'
  | 'invalid-event'
  | 'header-mismatch'
  | 'event-too-old'
  | 'synthetic-event'
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
  | 'entity-not-enabled'
  | StoreMisfitReason;

export type RejectStatus = 400 | 401 | 405 | 413 | 415;

/** What the log lines of a request carry (never a secret or a signature). */
export interface LogFields {
  eventId?: string;
  event?: string;
  contextIdentifier?: string;
  signatureVerified: boolean;
}

export type Decision =
  | { kind: 'reject'; status: RejectStatus; reason: RejectReason; detail: string; log: LogFields }
  | {
      kind: 'accept';
      message: OutboundMessage;
      log: LogFields;
      /** A created or state event without FieldValues (CRM versions older than FieldValues): applied all the same. */
      olderShape?: boolean;
    }
  | { kind: 'park'; reason: ParkReason; detail: string; message: OutboundMessage; log: LogFields }
  | { kind: 'test'; log: LogFields };

/**
 * The event name of the CRM's registration check: when a webhook is saved, the service posts an
 * event `test` (headers and body, with `X-Hook-Test: true`) and saves the webhook only if the
 * answer is 200. It carries no data, and the service's documentation asks receivers to ignore it.
 */
export const REGISTRATION_TEST_EVENT = 'test';

/**
 * How a delivery proved it is authentic: a signature over its bytes, the state-event token, or
 * nothing (an unsigned state event, or ALLOW_UNSIGNED). A queued message tells which: its
 * `signatureVerified` attribute, else a state event's name in its `event` attribute (see
 * lib/ingest/replay.ts).
 */
export type Authentication = 'signature' | 'token' | 'none';

/** The headers and authentication of a request, once read: what the later steps need. */
export interface Checked {
  request: DeliveryRequest;
  headers: DeliveryHeaders;
  log: LogFields;
  authenticatedBy: Authentication;
  /** The attributes every message of this delivery carries (a parked one adds `reason` and `detail`). */
  attributes: DeliveryAttributes;
  /** The body as text, once it is known to be UTF-8. */
  text?: string;
}

/**
 * Checks that the signature binds to the body's ContextIdentifier (or that an unsigned delivery may
 * be unsigned): a rejection, or undefined to go on.
 */
export type ContextBinding = (view: EnvelopeView) => Decision | undefined;
