/**
 * Cost per million events at list prices, from the requests and log lines the stack really makes per
 * event: the real ingest and contact-worker handlers (functions/) run here, the ingest against a
 * recording SQS client and the worker, on what the ingest queued, against a recording DynamoDB client.
 * Item sizes (so write units) are those of real rows and history records, log bytes those the
 * handlers print at the stage's log level, access log bytes those of serverless.yml's format filled in
 * from the same requests. `tsx scripts/cost.ts` prints the tables in docs/deploy.md: per worker batch size,
 * the total beside the floor (what the architecture must pay per event) and their ratio, on the
 * HTTP API and on the function URL, without and with subscriptions. Each section of the output is one
 * function in {@link SECTIONS}; a new one is added there.
 */
import { pathToFileURL } from 'node:url';
import { workerBatchSection } from './cost/per-event.js';
import { reconcileSection } from './cost/reconcile.js';

/** The sections `tsx scripts/cost.ts` prints, in order: each returns its lines. */
export const SECTIONS: Array<() => Promise<string[]>> = [workerBatchSection, reconcileSection];

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const section of SECTIONS) console.log((await section()).join('\n'));
}
