import * as z from 'zod/mini';

const IsoTime = z.iso.datetime({ offset: true });
const Count = z.number().check(z.int(), z.nonnegative());

/** Where a run's entities came from: the request's `entities`, the context's webhooks in the CRM, or the stored rows. */
export const ScopeSourceSchema = z.enum(['request', 'webhooks', 'stored rows']);
export type ScopeSource = z.infer<typeof ScopeSourceSchema>;

/** What a run has done so far, carried from invocation to invocation. */
export const CountersSchema = z.object({
  /** Rows the archive listed as changed in the window (each one snapshot sent). */
  rowsListed: Count,
  /** Snapshots sent of rows the CRM has (the workers decide whether one changes the row). */
  rowsChanged: Count,
  /** `Deleted: true` snapshots sent: stored rows the CRM no longer has (404). */
  rowsDeleted: Count,
  /** HTTP requests to the CRM, logins and retries included. */
  apiCalls: Count,
  /** Rows that could not become a snapshot (logged, one line each). */
  skipped: Count,
  /** Invocations of the reconcile function, this one included. */
  invocations: Count,
});
export type Counters = z.infer<typeof CountersSchema>;

/**
 * Where a run stands between two invocations (the request's `cursor`): the entities fixed when it
 * started (and those left out), the one in hand and its phase (`changed`: the archive's changed rows;
 * `count`: the CRM's ids against the stored rows, counted; `deletes`: the same, the rows the CRM no
 * longer has deleted), the last primary key listed or compared, and when the tenant may be
 * asked again.
 */
export const CursorSchema = z.object({
  startedAt: IsoTime,
  /** The window's end: the request's `to`, else when the run started. */
  to: IsoTime,
  entities: z.array(z.string()),
  /** A run not yet past its first step: `entities` is still to be fixed (lib/reconcile/run/scope.ts). */
  unscoped: z.optional(z.literal(true)),
  /** Where `entities` came from (lib/reconcile/run/scope.ts). */
  scopeFrom: z.optional(ScopeSourceSchema),
  /** Entities the run leaves out, with why (in `receiver.reconcile.completed`). */
  notReconciled: z.optional(z.record(z.string(), z.string())),
  entity: Count,
  phase: z.enum(['changed', 'count', 'deletes']),
  /**
   * The entity's deletes so far (phases `count` and `deletes`): its stored rows (not deleted) and those
   * the CRM's listing does not name; in `deletes`, how many of those the run may delete.
   */
  deletes: z.optional(
    z.object({
      stored: Count,
      missing: Count,
      allowed: z.optional(Count),
      /** The missing rows' keys, while there are few enough to keep (lib/reconcile/run/deletes.ts). */
      keys: z.optional(z.array(z.number())),
    }),
  ),
  /**
   * Entities whose deletes the run held back, more than the cap allows, each with the stored rows the
   * CRM's listing left out (the `maxDeletes` that lets a run apply them; their reason in `notReconciled`).
   */
  deletesHeld: z.optional(z.record(z.string(), Count)),
  /** Changed rows: the page after this primary key comes next (pages follow the key, not an offset). */
  afterKey: z.optional(z.number()),
  /** Deletes: every stored primary key up to this one has been compared. */
  after: z.optional(z.number()),
  /**
   * The largest skew of the CRM API's clock (its Date) against the live events' seen so far, signed
   * (ahead: positive), when beyond the bound (lib/reconcile/run/clock.ts).
   */
  clockSkewMs: z.optional(z.number()),
  /** Not before this time (the CRM's Retry-After, a tenant in maintenance). */
  notBefore: z.optional(IsoTime),
  /** Waits the CRM asked for in a row, no page done between them: each wait may be longer (lib/reconcile/run/run.ts). */
  waits: z.optional(Count),
  counters: CountersSchema,
});
export type Cursor = z.infer<typeof CursorSchema>;

export const NO_COUNTS: Counters = {
  rowsListed: 0,
  rowsChanged: 0,
  rowsDeleted: 0,
  apiCalls: 0,
  skipped: 0,
  invocations: 0,
};

/** The request's cursor, or a one-line error naming what is wrong with it. */
export function parseCursor(cursor: unknown): Cursor | undefined {
  if (cursor === undefined) return undefined;
  const parsed = z.safeParse(CursorSchema, cursor);
  if (!parsed.success)
    throw new Error(
      `the reconcile request's cursor is not one this function wrote (${parsed.error.issues[0]?.path.join('.') ?? ''}: ${parsed.error.issues[0]?.message ?? 'invalid'}): send the request again without it`,
    );
  return parsed.data;
}
