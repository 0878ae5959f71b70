import { EVENT_VALIDATORS } from '../generated/validators.js';
import type { ActivityEvent } from './activity.js';
import type { ContactEvent } from './contact.js';
import type { DeliveryEvent, ZodOutcome } from './schemas.js';
import type { WebhookStateEvent } from './webhook.js';

/**
 * The events as the functions use them, with no zod at import: valid bodies are judged by the
 * checks generated from the zod schemas (lib/generated/validators.js, `npm run generate`), and zod
 * is loaded only to explain a refusal. The schemas themselves are in ./schemas.js.
 */
export type * from './activity.js';
export type * from './contact.js';
export type * from './envelope.js';
export type { DeliveryEvent } from './schemas.js';
export * from './states.js';
export * from './timestamp.js';
export type * from './webhook.js';

export type RowEvent = ContactEvent | ActivityEvent;
export type { ActivityEvent, ContactEvent, WebhookStateEvent };

/** Body `Event` names the spec covers. */
export const KNOWN_EVENTS: ReadonlySet<string> = new Set(EVENT_VALIDATORS.keys());

export type ParseOutcome = ZodOutcome;

/**
 * The body itself when it is a valid event of the spec, judged by the generated check of its
 * `Event` (the same verdict as zod's, whose output would be an equal copy: the schemas have no
 * transforms); undefined otherwise. Synchronous and allocation-free: the ingest's hot path.
 */
export function checkDeliveryEvent(body: unknown): DeliveryEvent | undefined {
  const event = typeof body === 'object' && body !== null ? (body as { Event?: unknown }).Event : undefined;
  if (typeof event !== 'string') return undefined;
  return EVENT_VALIDATORS.get(event)?.(body) === true ? (body as DeliveryEvent) : undefined;
}

/**
 * Validates an already parsed JSON body against the spec: {@link checkDeliveryEvent}, then, for a
 * body it refuses, zod's own verdict with its reason (`unknown-event` or `invalid-event`) and a
 * short detail naming the first offending fields (never their values). zod decides in the end, so a
 * generated check can make a refusal slower but never change a verdict.
 */
export async function parseDeliveryEvent(body: unknown): Promise<ParseOutcome> {
  const event = checkDeliveryEvent(body);
  if (event !== undefined) return { ok: true, event };
  const { parseWithZod } = await import('./schemas.js');
  return parseWithZod(body);
}

export function isRowEvent(event: DeliveryEvent): event is RowEvent {
  return 'Entity' in event && (event.Entity === 'contact' || event.Entity === 'activity');
}
