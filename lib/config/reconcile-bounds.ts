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

/** Reads the run's bounds once, strictly: a wrong value is a one-line ConfigError naming the variable and its range. */
export function readRunBounds(env: Env = process.env): RunBounds {
  return {
    maxRunHours: whole(env, 'RECONCILE_MAX_RUN_HOURS', DEFAULT_RUN_BOUNDS.maxRunHours, 720),
    maxInvocations: whole(env, 'RECONCILE_MAX_INVOCATIONS', DEFAULT_RUN_BOUNDS.maxInvocations, 100_000),
  };
}

function whole(env: Env, name: string, fallback: number, max: number): number {
  const raw = optionalEnv(name, env)?.trim();
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < 1 || value > max)
    throw new ConfigError(`${name} must be a whole number from 1 to ${max} (default ${fallback})`, name);
  return value;
}
