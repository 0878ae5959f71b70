import type { SQSClient } from '@aws-sdk/client-sqs';
import { reconciliationNote, reconciliationOff } from '../../dashboard/reconcile-routes.js';
import type { Reconciliation } from '../../dashboard/source.js';
import { readCrmConfig } from '../../lib/config/crm.js';
import { createSqsReconcileQueue } from '../../lib/queue/sqs-reconcile.js';
import type { LocalQueue } from '../emulators/resources.js';

/**
 * Reconciliation as the local runtime offers it: on with CRM_API_URL (the admin API's
 * `POST /reconcile` queues on the local reconcile queue, which the reconcile function polls), else
 * off, which the ready line, `GET /gaps` and the dashboard say. Read from the functions' environment
 * (`.env` included), checked at start by checkFunctionSettings.
 */
export function localReconciliation(
  env: NodeJS.ProcessEnv,
  queues: readonly LocalQueue[],
  sqs: SQSClient,
): Reconciliation {
  const config = readCrmConfig(env);
  if (!config.enabled) return reconciliationOff();
  const queue = queues.find((candidate) => candidate.key === 'reconcile');
  if (!queue) throw new Error('infra/resources.yml defines no ReconcileQueue');
  return {
    enabled: true,
    note: reconciliationNote(config.apiUrl),
    ...createSqsReconcileQueue({ client: sqs, queueUrl: queue.url }),
  };
}
