import * as z from 'zod/mini';
import { EnvelopeSchema } from './envelope.js';
import {
  absent,
  DateWithOffsetSchema,
  DateWithoutOffsetSchema,
  EmptyChangesSchema,
  IntSchema,
  lazy,
} from './primitives.js';

/** FieldValues of the webhook state events. `state` is recorded as reported but never trusted. */
export const WebhookFieldValuesSchema = lazy(() =>
  z.looseObject({
    events: IntSchema,
    registered: DateWithOffsetSchema,
    registered_associate_id: IntSchema,
    state: IntSchema,
    updated: DateWithoutOffsetSchema,
    updated_associate_id: IntSchema,
  }),
);

const WebhookStateBaseSchema = lazy(() =>
  z.extend(EnvelopeSchema, {
    Changes: EmptyChangesSchema,
    ChangedByAssociateId: z.literal(0, 'must be 0 for webhook state events'),
    Entity: absent('must be absent on webhook state events'),
    FieldValues: WebhookFieldValuesSchema(),
    Values: absent('must be absent on webhook state events'),
  }),
);

export const WebhookStartedSchema = lazy(() =>
  z.extend(WebhookStateBaseSchema(), { Event: z.literal('webhook.started') }),
);
export const WebhookStoppedSchema = lazy(() =>
  z.extend(WebhookStateBaseSchema(), { Event: z.literal('webhook.stopped') }),
);
export const WebhookErrorsSchema = lazy(() =>
  z.extend(WebhookStateBaseSchema(), { Event: z.literal('webhook.errors') }),
);

export type WebhookFieldValues = z.infer<ReturnType<typeof WebhookFieldValuesSchema>>;
export type WebhookStarted = z.infer<ReturnType<typeof WebhookStartedSchema>>;
export type WebhookStopped = z.infer<ReturnType<typeof WebhookStoppedSchema>>;
export type WebhookErrors = z.infer<ReturnType<typeof WebhookErrorsSchema>>;
export type WebhookStateEvent = WebhookStarted | WebhookStopped | WebhookErrors;
