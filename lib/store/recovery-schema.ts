import * as z from 'zod/mini';
import type { ReconcileOutcome } from './recovery.js';

/** A reconcile run's state: started (its first invocation), then completed or failed (its last attempt). */
export const RECONCILE_STATUSES = ['running', 'completed', 'failed'] as const;

/** A recovery item's `reconcile` as lib/store/recovery.ts writes it. */
export const ReconcileOutcomeSchema = z.object({
  status: z.enum(RECONCILE_STATUSES),
  reason: z.string(),
  requestedAt: z.string(),
  startedAt: z.string(),
  at: z.string(),
  from: z.optional(z.string()),
  to: z.optional(z.string()),
  full: z.optional(z.boolean()),
  entities: z.optional(z.array(z.string())),
  maxDeletes: z.optional(z.number()),
  rowsListed: z.optional(z.number()),
  rowsChanged: z.optional(z.number()),
  rowsDeleted: z.optional(z.number()),
  apiCalls: z.optional(z.number()),
  durationMs: z.optional(z.number()),
  notReconciled: z.optional(z.record(z.string(), z.string())),
  deletesHeld: z.optional(z.record(z.string(), z.number())),
  clockSkewSeconds: z.optional(z.number()),
  error: z.optional(z.string()),
}) satisfies z.ZodMiniType<ReconcileOutcome>;
