import * as z from 'zod/mini';
import { EnvelopeSchema } from './envelope.js';
import {
  absent,
  DateWithOffsetSchema,
  DateWithoutOffsetSchema,
  EmptyChangesSchema,
  IntSchema,
} from './primitives.js';

/** FieldValues of the webhook state events. `state` is recorded as reported but never trusted. */
export const WebhookFieldValuesSchema = z.looseObject({
  events: IntSchema,
  registered: DateWithOffsetSchema,
  registered_associate_id: IntSchema,
  state: IntSchema,
  updated: DateWithoutOffsetSchema,
  updated_associate_id: IntSchema,
});

const WebhookStateBaseSchema = z.extend(EnvelopeSchema, {
  Changes: EmptyChangesSchema,
  ChangedByAssociateId: z.literal(0, 'must be 0 for webhook state events'),
  Entity: absent('must be absent on webhook state events'),
  // Optional: CRM versions older than FieldValues send state events without it.
  FieldValues: z.optional(WebhookFieldValuesSchema),
  Values: absent('must be absent on webhook state events'),
});

export const WebhookStartedSchema = z.extend(WebhookStateBaseSchema, { Event: z.literal('webhook.started') });
export const WebhookStoppedSchema = z.extend(WebhookStateBaseSchema, { Event: z.literal('webhook.stopped') });
export const WebhookErrorsSchema = z.extend(WebhookStateBaseSchema, { Event: z.literal('webhook.errors') });

export type WebhookFieldValues = z.infer<typeof WebhookFieldValuesSchema>;
export type WebhookStarted = z.infer<typeof WebhookStartedSchema>;
export type WebhookStopped = z.infer<typeof WebhookStoppedSchema>;
export type WebhookErrors = z.infer<typeof WebhookErrorsSchema>;
export type WebhookStateEvent = WebhookStarted | WebhookStopped | WebhookErrors;
