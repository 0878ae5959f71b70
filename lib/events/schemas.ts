import * as z from 'zod/mini';
import { ActivityChangedSchema, ActivityCreatedSchema, ActivityDeletedSchema } from './activity.js';
import {
  ContactChangedSchema,
  ContactCreatedSchema,
  ContactDeletedSchema,
  ContactSoftDeletedSchema,
} from './contact.js';
import { EnvelopeSchema } from './envelope.js';
import { lazy } from './primitives.js';
import { WebhookErrorsSchema, WebhookStartedSchema, WebhookStoppedSchema } from './webhook.js';

/**
 * The zod side of the events: the schemas (the single source of truth), what `npm run generate`
 * compiles into lib/generated/validators.js, and the explanation of a refusal. Functions load this
 * module only when a body is refused (`await import`), so zod is never built at a cold start.
 */
export * from './activity.js';
export * from './contact.js';
export * from './envelope.js';
export * from './primitives.js';
export * from './webhook.js';

/** The schema of each body `Event` the spec covers, built on first use (see {@link lazy}). */
export const SCHEMA_BY_EVENT: ReadonlyMap<string, () => z.core.$ZodType> = new Map<
  string,
  () => z.core.$ZodType
>([
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

export type DeliveryEvent = z.infer<ReturnType<typeof DeliveryEventSchema>>;

export type ZodOutcome =
  | { ok: true; event: DeliveryEvent }
  | { ok: false; reason: 'unknown-event' | 'invalid-event'; detail: string };

/**
 * zod's verdict on an already parsed JSON body. An envelope whose `Event` the spec does not cover
 * is `unknown-event`; anything else that breaks a rule is `invalid-event`, with a short detail naming
 * the first offending fields (never their values).
 */
export function parseWithZod(body: unknown): ZodOutcome {
  const event = typeof body === 'object' && body !== null ? (body as { Event?: unknown }).Event : undefined;
  const schema = typeof event === 'string' ? SCHEMA_BY_EVENT.get(event)?.() : undefined;
  const result = z.safeParse(schema ?? DeliveryEventSchema(), body);
  if (result.success) return { ok: true, event: result.data as DeliveryEvent };
  const envelope = EnvelopeSchema.safeParse(body);
  if (envelope.success && !SCHEMA_BY_EVENT.has(envelope.data.Event)) {
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
