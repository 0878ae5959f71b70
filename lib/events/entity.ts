import * as z from 'zod/mini';
import { EnvelopeSchema } from './envelope.js';

/** FieldValues or Values of a catalogue event: any JSON object, kept exactly as delivered. */
const PayloadSchema = z.optional(z.record(z.string(), z.unknown()));

/**
 * Every event of the catalogue beyond the spec's ten, validated at envelope level: the envelope's
 * fields, an Entity, and FieldValues and Values (when present) as objects, whatever their keys and
 * values (a custom table's typed strings such as `"[I:6]"` stay as they are).
 */
export const EntityEventSchema = z.extend(EnvelopeSchema, {
  Entity: z.string().check(z.minLength(1)),
  FieldValues: PayloadSchema,
  Values: PayloadSchema,
});

/**
 * The schema of one catalogue family: {@link EntityEventSchema} with its own Event and its Entity.
 *
 * @example entityEventSchema('sale.sold', 'sale')
 */
export function entityEventSchema(event: string, entity: string) {
  return z.extend(EntityEventSchema, {
    Event: z.literal(event),
    Entity: z.literal(entity, `must be "${entity}" for ${event}`),
  });
}

export type EntityEvent = z.infer<typeof EntityEventSchema>;
