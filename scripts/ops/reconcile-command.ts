import { queueOutputs } from '../../infra/definitions.js';
import { createSqsReconcileQueue } from '../../lib/queue/sqs-reconcile.js';
import type { ReconcileRequest } from '../../lib/reconcile/request.js';
import { ManualRequestError, manualRequest } from '../../lib/reconcile/triggers/manual.js';
import { type OpsClients, OpsError, output, type StackOutputs } from './commands.js';

/** `--context`, `--from`, `--to`, `--entities`, `--full`, `--max-deletes` as the command line gave them. */
export interface ReconcileOptions {
  context?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
  entities?: string | undefined;
  full?: boolean | undefined;
  'max-deletes'?: string | undefined;
}

/**
 * `npm run ops -- reconcile`: a manual reconcile on the stage's reconcile queue (the `ReconcileQueueUrl`
 * output), checked as `POST /reconcile` checks it; a wrong option is one line naming it, nothing sent.
 * The stage's reconcile function runs it, when the stage has crmApiUrl (else it fails into the reconcile
 * DLQ, which alarms).
 */
export async function reconcile(
  clients: OpsClients,
  outputs: StackOutputs,
  options: ReconcileOptions,
): Promise<{ queued: ReconcileRequest; queueUrl: string }> {
  let request: ReconcileRequest;
  try {
    request = manualRequest(
      {
        context: options.context,
        from: options.from,
        to: options.to,
        entities: options.entities,
        full: options.full ? 'true' : undefined,
        maxDeletes: options['max-deletes'],
      },
      new Date(),
    );
  } catch (error) {
    if (error instanceof ManualRequestError)
      throw new OpsError(`--${error.message.replace(/^maxDeletes/, 'max-deletes')}`);
    throw error;
  }
  const queueUrl = output(outputs, queueOutputs('reconcile').url);
  await createSqsReconcileQueue({ client: clients.sqs, queueUrl }).enqueue(request);
  return { queued: request, queueUrl };
}
