import * as z from 'zod/mini';
import { EnvelopeSchema } from './envelope.js';
import { type DeliveryEvent, familyOf } from './registry.js';

export type ParseOutcome =
  | { ok: true; event: DeliveryEvent }
  | { ok: false; reason: 'unknown-event' | 'invalid-event'; detail: string };

/**
 * Validates a parsed JSON body with the schema of its family (found by the body's `Event`). A valid
 * envelope whose `Event` the registry does not know is `unknown-event`; anything else that breaks a
 * rule is `invalid-event`, with a short detail naming the first offending fields (never their values).
 * The schemas have no transforms: a valid event is the body itself.
 */
export function parseDeliveryEvent(body: unknown): ParseOutcome {
  const named = typeof body === 'object' && body !== null ? (body as { Event?: unknown }).Event : undefined;
  const name = typeof named === 'string' ? named : undefined;
  const family = name === undefined ? undefined : familyOf(name);
  if (name !== undefined && family !== undefined) {
    const result = z.safeParse(family.schema, body);
    if (!result.success) return { ok: false, reason: 'invalid-event', detail: describeIssues(result.error) };
    // The catalogue's families share one schema: their Entity is the family's own.
    if (family.entity !== 'webhook' && (body as { Entity?: unknown }).Entity !== family.entity) {
      return {
        ok: false,
        reason: 'invalid-event',
        detail: `Entity: must be "${clipped(family.entity)}" for ${clipped(name)}`,
      };
    }
    return { ok: true, event: body as DeliveryEvent };
  }
  const envelope = z.safeParse(EnvelopeSchema, body);
  if (!envelope.success)
    return { ok: false, reason: 'invalid-event', detail: describeIssues(envelope.error) };
  return {
    ok: false,
    reason: 'unknown-event',
    detail: `event "${clipped(envelope.data.Event)}" is neither in the spec nor in the CRM catalogue`,
  };
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

/** The body as a typed event when it is valid, else undefined (for callers that need no reason). */
export function validEvent(body: unknown): DeliveryEvent | undefined {
  const outcome = parseDeliveryEvent(body);
  return outcome.ok ? outcome.event : undefined;
}
