/**
 * The few top-level fields of a parsed body that the pipeline needs before (or without) validation:
 * the context the signature binds to, the event name, and the row a parked body speaks of. Read once,
 * with type checks instead of casts; a field of another type is absent.
 */
export interface EnvelopeView {
  event?: string;
  context?: string;
  entity?: string;
  primaryKey?: number | string;
}

export function envelopeView(json: unknown): EnvelopeView {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return {};
  const { Event, ContextIdentifier, Entity, PrimaryKey } = json as Record<string, unknown>;
  const view: EnvelopeView = {};
  if (typeof Event === 'string') view.event = Event;
  if (typeof ContextIdentifier === 'string') view.context = ContextIdentifier;
  if (typeof Entity === 'string') view.entity = Entity;
  if (typeof PrimaryKey === 'number' || typeof PrimaryKey === 'string') view.primaryKey = PrimaryKey;
  return view;
}
