import { optionalEnv, requireEnv } from '../lib/config/env.js';
import { OWN_QUEUE_ENV_VARS } from '../lib/queue/port.js';
import { sqsJsonReconcileQueue } from '../lib/queue/sqs-json-reconcile.js';
import type { ReconcileQueue } from '../lib/reconcile/request.js';

/**
 * The reconcile queue from the environment (RECONCILE_QUEUE_URL, required with CRM_API_URL), or
 * undefined when reconciliation is off (no CRM_API_URL): then gaps are recorded and announced, and
 * nothing is enqueued. Only whether CRM_API_URL is set counts here (the functions that call the CRM
 * validate it with readCrmConfig; its schemas would put the state worker's bundle over its budget).
 * The endpoint follows the SDK's convention (AWS_ENDPOINT_URL_SQS).
 */
export function reconcileQueueFromEnv(env = process.env): ReconcileQueue | undefined {
  if (optionalEnv('CRM_API_URL', env) === undefined) return undefined;
  return sqsJsonReconcileQueue({
    queueUrl: requireEnv(OWN_QUEUE_ENV_VARS.reconcile, env),
    region: requireEnv('AWS_REGION', env),
    endpoint: optionalEnv('AWS_ENDPOINT_URL_SQS', env),
  });
}
