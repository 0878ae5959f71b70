import { ConfigError, optionalEnv } from './env.js';

type Env = Record<string, string | undefined>;

/** How long and how many invocations one reconcile run may take before it gives up visibly. */
export interface RunBounds {
  /** RECONCILE_MAX_RUN_HOURS: hours from a run's first invocation (default 24, 1 to 720). */
  maxRunHours: number;
  /** RECONCILE_MAX_INVOCATIONS: invocations of one run, waits included (default 1000, 1 to 100000). */
  maxInvocations: number;
}

export const DEFAULT_RUN_BOUNDS: RunBounds = { maxRunHours: 24, maxInvocations: 1000 };

/**
 * How many of an entity's stored rows one run may delete: the larger of `rows` and `percent` % of
 * them. A run that would delete more applies none of that entity's deletes (a CRM that lists no ids
 * would otherwise have every stored row deleted, and erased).
 */
export interface DeleteCap {
  /** RECONCILE_MAX_DELETES: rows (default 10, 0 to 1000000). */
  rows: number;
  /** RECONCILE_MAX_DELETES_PERCENT: percent of the entity's stored rows (default 10, 0 to 100). */
  percent: number;
}

export const DEFAULT_DELETE_CAP: DeleteCap = { rows: 10, percent: 10 };

/** Reads the run's bounds once, strictly: a wrong value is a one-line ConfigError naming the variable and its range. */
export function readRunBounds(env: Env = process.env): RunBounds {
  return {
    maxRunHours: whole(env, 'RECONCILE_MAX_RUN_HOURS', DEFAULT_RUN_BOUNDS.maxRunHours, 720),
    maxInvocations: whole(env, 'RECONCILE_MAX_INVOCATIONS', DEFAULT_RUN_BOUNDS.maxInvocations, 100_000),
  };
}

/** Reads the deletes one run may apply per entity, strictly, as {@link readRunBounds} does. */
export function readDeleteCap(env: Env = process.env): DeleteCap {
  return {
    rows: whole(env, 'RECONCILE_MAX_DELETES', DEFAULT_DELETE_CAP.rows, 1_000_000, 0),
    percent: whole(env, 'RECONCILE_MAX_DELETES_PERCENT', DEFAULT_DELETE_CAP.percent, 100, 0),
  };
}

function whole(env: Env, name: string, fallback: number, max: number, min = 1): number {
  const raw = optionalEnv(name, env)?.trim();
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max)
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max} (default ${fallback})`, name);
  return value;
}
