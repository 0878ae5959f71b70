import * as z from 'zod/mini';
import {
  ActivityChangedSchema,
  ActivityCreatedSchema,
  ActivityDeletedSchema,
  type ActivityEvent,
} from './activity.js';
import {
  ContactChangedSchema,
  ContactCreatedSchema,
  ContactDeletedSchema,
  type ContactEvent,
  ContactSoftDeletedSchema,
} from './contact.js';
import { EnvelopeSchema } from './envelope.js';
import { lazy } from './primitives.js';
import { compileValidator, type Validator } from './validator.js';
import {
  WebhookErrorsSchema,
  WebhookStartedSchema,
  type WebhookStateEvent,
  WebhookStoppedSchema,
} from './webhook.js';

export * from './activity.js';
export * from './contact.js';
export * from './envelope.js';
export * from './primitives.js';
export * from './webhook.js';

/** The schema of each body `Event` the spec covers, built on first use (see {@link lazy}). */
const SCHEMA_BY_EVENT = new Map<string, () => z.core.$ZodType>([
  ['webhook.started', WebhookStartedSchema],
  ['webhook.stopped', WebhookStoppedSchema],
  ['webhook.errors', WebhookErrorsSchema],
  ['contact.created', ContactCreatedSchema],
  ['contact.changed', ContactChangedSchema],
  ['contact.softdeleted', ContactSoftDeletedSchema],
  ['contact.deleted', ContactDeletedSchema],
  ['activity.created', ActivityCreatedSchema],
  ['activity.changed', ActivityChangedSchema],
  ['activity.deleted', ActivityDeletedSchema],
]);

/** Every event of the spec, told apart by the body's `Event` (for bodies whose `Event` is not one). */
export const DeliveryEventSchema = lazy(() =>
  z.discriminatedUnion('Event', [
    WebhookStartedSchema(),
    WebhookStoppedSchema(),
    WebhookErrorsSchema(),
    ContactCreatedSchema(),
    ContactChangedSchema(),
    ContactSoftDeletedSchema(),
    ContactDeletedSchema(),
    ActivityCreatedSchema(),
    ActivityChangedSchema(),
    ActivityDeletedSchema(),
  ]),
);

const VALIDATOR_BY_EVENT = new Map<string, Validator>();

/**
 * The schema of a body `Event` compiled to a verdict-only predicate (see {@link compileValidator}),
 * on the first delivery of that event: a cold start compiles the one it meets, not all ten. A schema
 * the compiler cannot judge is left to zod (same verdict, slower); the validator test compiles
 * every event schema, so that fallback is never what ships.
 */
export function validatorFor(event: string): Validator | undefined {
  let validator = VALIDATOR_BY_EVENT.get(event);
  if (validator === undefined) {
    const schema = SCHEMA_BY_EVENT.get(event)?.();
    if (schema === undefined) return undefined;
    try {
      validator = compileValidator(schema);
    } catch {
      validator = (value) => z.safeParse(schema, value).success;
    }
    VALIDATOR_BY_EVENT.set(event, validator);
  }
  return validator;
}

export type DeliveryEvent = z.infer<ReturnType<typeof DeliveryEventSchema>>;
export type RowEvent = ContactEvent | ActivityEvent;
export type { ActivityEvent, ContactEvent, WebhookStateEvent };

/** Body `Event` names the spec covers. */
export const KNOWN_EVENTS: ReadonlySet<string> = new Set(SCHEMA_BY_EVENT.keys());

export type ParseOutcome =
  | { ok: true; event: DeliveryEvent }
  | { ok: false; reason: 'unknown-event' | 'invalid-event'; detail: string };

/**
 * Validates an already parsed JSON body against the spec. An envelope whose `Event` the spec does
 * not cover is `unknown-event`; anything else that breaks a rule is `invalid-event`, with a short
 * detail naming the first offending fields (never their values).
 */
export function parseDeliveryEvent(body: unknown): ParseOutcome {
  const event = typeof body === 'object' && body !== null ? (body as { Event?: unknown }).Event : undefined;
  if (typeof event === 'string' && validatorFor(event)?.(body) === true) {
    // Valid: zod's output would be an equal copy (no transforms), so the body itself is the event.
    return { ok: true, event: body as DeliveryEvent };
  }
  const schema = typeof event === 'string' ? SCHEMA_BY_EVENT.get(event)?.() : undefined;
  const result = z.safeParse(schema ?? DeliveryEventSchema(), body);
  if (result.success) return { ok: true, event: result.data as DeliveryEvent };
  const envelope = EnvelopeSchema.safeParse(body);
  if (envelope.success && !KNOWN_EVENTS.has(envelope.data.Event)) {
    return {
      ok: false,
      reason: 'unknown-event',
      detail: `event "${clipped(envelope.data.Event)}" is not in the spec`,
    };
  }
  return { ok: false, reason: 'invalid-event', detail: describeIssues(result.error) };
}

/** `FieldValues.updated: must be ...; Changes: ...` (paths and messages only, at most five). */
export function describeIssues(error: { issues: readonly z.core.$ZodIssue[] }): string {
  return error.issues
    .slice(0, 5)
    .map(
      (issue) =>
        `${issue.path.length > 0 ? issue.path.map((key) => clipped(String(key))).join('.') : '(body)'}: ${issue.message}`,
    )
    .join('; ');
}

/**
 * A body value quoted in a detail, cut to 64 characters: details reach answers and log lines, which
 * must not grow with what an unauthenticated sender puts in a body.
 */
function clipped(value: string): string {
  return value.length > 64 ? `${value.slice(0, 64)}…` : value;
}

export function isRowEvent(event: DeliveryEvent): event is RowEvent {
  return 'Entity' in event && (event.Entity === 'contact' || event.Entity === 'activity');
}
