import { OWN_QUEUE_ENV_VARS } from '../queue/port.js';
import { ConfigError, requireEnv } from './env.js';
import { type DeleteCap, type RunBounds, readDeleteCap, readRunBounds } from './reconcile-bounds.js';

type Env = Record<string, string | undefined>;

/** The reconcile function's own settings, beside the CRM's (readCrmConfig). */
export interface ReconcileConfig {
  /** RECONCILE_QUEUE_URL: the reconcile FIFO queue (its requests and the run's continuations). */
  queueUrl: string;
  /**
   * RECONCILE_MAX_RECEIVE_COUNT: the reconcile queue's maxReceiveCount, as infra/resources.yml defines
   * it (serverless.yml and the local runtime set it from there): the attempt that gives up publishes
   * `receiver.reconcile.failed`.
   */
  maxReceives: number;
  /** RECONCILE_MAX_RUN_HOURS and RECONCILE_MAX_INVOCATIONS. */
  bounds: RunBounds;
  /** RECONCILE_MAX_DELETES and RECONCILE_MAX_DELETES_PERCENT. */
  maxDeletes: DeleteCap;
}

/** The variable that carries the reconcile queue's maxReceiveCount to the function. */
export const MAX_RECEIVE_COUNT_ENV_VAR = 'RECONCILE_MAX_RECEIVE_COUNT';

/** Reads the reconcile function's settings once, strictly: a missing or wrong one is a ConfigError naming it. */
export function readReconcileConfig(env: Env = process.env): ReconcileConfig {
  const queueUrl = requireEnv(OWN_QUEUE_ENV_VARS.reconcile, env);
  const maxReceives = Number(requireEnv(MAX_RECEIVE_COUNT_ENV_VAR, env));
  if (!Number.isSafeInteger(maxReceives) || maxReceives < 1)
    throw new ConfigError(
      `${MAX_RECEIVE_COUNT_ENV_VAR} must be the reconcile queue's maxReceiveCount, a whole number from 1`,
      MAX_RECEIVE_COUNT_ENV_VAR,
    );
  return { queueUrl, maxReceives, bounds: readRunBounds(env), maxDeletes: readDeleteCap(env) };
}
