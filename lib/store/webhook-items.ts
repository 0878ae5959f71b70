import * as z from 'zod/mini';
import { WebhookStateNameSchema } from '../events/index.js';
import type { LastAccepted, StateTransition } from '../model/types.js';

/** The schemas of the webhooks table's items as the adapter reads them back (items.ts: the rows and events tables'). */

const StateSchema = z.union([z.literal(0), z.literal(1), z.literal(2)]);

const TransitionSchema = z.object({
  seq: z.string(),
  eventId: z.string(),
  timestamp: z.string(),
  state: StateSchema,
  gapFrom: z.optional(z.string()),
}) satisfies z.ZodMiniType<StateTransition>;

/** A webhook item (`webhook#<id>`); the item's `sk` and `version` are the adapter's. */
export const WebhookItemSchema = z.object({
  context: z.string(),
  sk: z.string(),
  version: z.number(),
  webhookId: z.number(),
  webhookName: z.string(),
  state: StateSchema,
  stateName: WebhookStateNameSchema,
  reportedState: z.optional(z.number()),
  events: z.optional(z.number()),
  registered: z.optional(z.string()),
  registeredAssociateId: z.optional(z.number()),
  updated: z.optional(z.string()),
  updatedAssociateId: z.optional(z.number()),
  registrationSeq: z.optional(z.string()),
  lastEventId: z.string(),
  lastTimestamp: z.string(),
  lastSeq: z.string(),
  stateChangedAt: z.string(),
  eventCount: z.number(),
  transitions: z.array(TransitionSchema),
});

/** A last-accepted marker (`accepted#<WebhookName>`). */
export const AcceptedItemSchema = z.object({
  seq: z.string(),
  timestamp: z.string(),
  eventId: z.string(),
  receivedAt: z.optional(z.string()),
}) satisfies z.ZodMiniType<LastAccepted>;
