import * as z from 'zod/mini';
import { ChangesSchema, IntSchema, UtcTimestampSchema } from './primitives.js';

/**
 * Fields every delivery carries. The object is loose: top-level fields the spec does not list
 * (the service's custom properties) are kept as they came.
 */
export const EnvelopeSchema = z.looseObject({
  EventId: z.guid('must be a UUID'),
  Timestamp: UtcTimestampSchema,
  Changes: ChangesSchema,
  Event: z.string().check(z.minLength(1)),
  PrimaryKey: IntSchema,
  ContextIdentifier: z.string().check(z.minLength(1)),
  ChangedByAssociateId: IntSchema,
  WebhookName: z.string(),
});

export type Envelope = z.infer<typeof EnvelopeSchema>;
