import * as z from 'zod/mini';
import { EnvelopeSchema } from './envelope.js';
import { AnyPayloadSchema } from './primitives.js';

/**
 * Every event of the catalogue beyond the spec's ten, validated at envelope level: the envelope's
 * fields, an Entity, and FieldValues and Values (when present) as objects, whatever their keys and
 * values (a custom table's typed strings such as `"[I:6]"` stay as they are). One schema for every
 * such family: that the Entity is the family's is checked beside it (`parseDeliveryEvent`).
 */
export const EntityEventSchema = z.extend(EnvelopeSchema, {
  Entity: z.string().check(z.minLength(1)),
  FieldValues: AnyPayloadSchema,
  Values: AnyPayloadSchema,
});

export type EntityEvent = z.infer<typeof EntityEventSchema>;
