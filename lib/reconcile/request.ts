import { createHash } from 'node:crypto';
import * as z from 'zod/mini';
import { ContextIdentifierSchema } from '../events/primitives.js';

/** Why a reconcile runs: a gap of a webhook (opened, closed), the poll of the CRM's webhooks, a person, a full pass. */
export const RECONCILE_REASONS = ['gap-opened', 'gap-closed', 'poll', 'manual', 'full'] as const;
export type ReconcileReason = (typeof RECONCILE_REASONS)[number];

const IsoTime = z.iso.datetime({ offset: true });

/**
 * One reconciliation of a tenant (a ContextIdentifier): the rows of `entities` changed in
 * [`from`, `to`] (CRM time), and the rows deleted since they were stored; `full` compares every row
 * instead of a window. The one message of the reconcile queue (FIFO, grouped by context) and the body
 * of `POST /reconcile`; a run too long for one invocation carries its `cursor` on to the next.
 */
export const ReconcileRequestSchema = z.strictObject({
  context: ContextIdentifierSchema,
  reason: z.enum(RECONCILE_REASONS),
  /** Start of the window (CRM time, ISO 8601), already less the margin; absent only when `full`. */
  from: z.optional(IsoTime),
  /** End of the window; absent: until the run starts. */
  to: z.optional(IsoTime),
  full: z.optional(z.boolean()),
  /** Entities to reconcile; absent: every entity the receiver stores (ENTITIES) and can reconcile (lib/reconcile/run/scope.ts). */
  entities: z.optional(z.array(z.string().check(z.minLength(1), z.maxLength(100))).check(z.maxLength(100))),
  /**
   * The deletes the run may apply per entity, instead of RECONCILE_MAX_DELETES's cap: a person's
   * answer to a run that held an entity's deletes back (lib/reconcile/run/deletes.ts).
   */
  maxDeletes: z.optional(z.number().check(z.int(), z.nonnegative())),
  /** The webhook whose gap or poll asked for it, if any (lifecycle events name it). */
  webhookId: z.optional(z.number()),
  requestedAt: IsoTime,
  /** Where a run paged across invocations resumes; opaque to everyone but the reconcile function. */
  cursor: z.optional(z.unknown()),
});
export type ReconcileRequest = z.infer<typeof ReconcileRequestSchema>;

/** A message for the reconcile queue: grouped by context (one tenant's runs in order, tenants in parallel). */
export interface ReconcileMessage {
  groupId: string;
  deduplicationId: string;
  body: string;
}

/**
 * The reconcile queue's message for a request. Its deduplication id is a hash of the whole request
 * (cursor included), so the same trigger fired twice within SQS's 5 minutes is one run, and each
 * continuation of a run is its own message.
 */
export function reconcileMessage(request: ReconcileRequest): ReconcileMessage {
  const body = JSON.stringify(z.parse(ReconcileRequestSchema, request));
  return {
    groupId: request.context,
    deduplicationId: createHash('sha256').update(body).digest('hex').slice(0, 64),
    body,
  };
}

/** The port every trigger (gap, poll, admin API, ops) sends requests through. */
export interface ReconcileQueue {
  enqueue(request: ReconcileRequest): Promise<void>;
}
