/**
 * The receiver's own shape as the capacity model needs it, read from where it is decided: the default
 * stage's params and the event source mappings of serverless.yml (infra/functions.ts, which the local
 * runtime reads too), the queues of infra/resources.yml, the durations scripts/cost/prices.ts assumes,
 * the DynamoDB writes the real contact worker makes per event (scripts/cost/measure.ts measures them),
 * the sender's retries and the reconcile limits' defaults. Nothing here is written twice.
 */
import * as z from 'zod';
import { loadDefinitions, type QueueKey } from '../../infra/definitions.js';
import { loadFunctions } from '../../infra/functions.js';
import { loadServerless } from '../../infra/serverless-file.js';
import { readCrmConfig } from '../../lib/config/crm.js';
import { FIXED_EVENT_NAMES, familyOf } from '../../lib/events/registry.js';
import { REAL_RETRY_DELAYS_MS } from '../../tools/sender.js';
import { type Measured, measure } from '../cost/measure.js';
import { ASSUMPTIONS } from '../cost/prices.js';

/** One worker's SQS event source mapping, with what the model needs of its queue. */
export interface WorkerShape {
  function: string;
  queue: QueueKey;
  batchSize: number;
  maximumConcurrency: number;
  /** DeduplicationScope messageGroup and FifoThroughputLimit perMessageGroupId: SQS's high throughput mode. */
  highThroughput: boolean;
  visibilityTimeoutSeconds: number;
}

export interface StageShape {
  ingestReservedConcurrency: number;
  /** The HTTP API route's throttle: requests per second and the token bucket's burst. */
  ingestThrottleRate: number;
  ingestThrottleBurst: number;
  /** Estimated seconds of work per delivery (ingest) and per event (worker), in milliseconds. */
  ingestMs: number;
  workerMsPerEvent: number;
  /** The mappings of the queues that carry row events (not the webhook state queue). */
  workers: WorkerShape[];
  /** Write units of one DynamoDB write of the worker (measured), each table taking one write per event. */
  unitsPerWrite: number;
  /** Writes per event to the one item of a tenant (the last-accepted marker, keyed by context). */
  tenantItemWritesPerEvent: number;
  /** How long the sender keeps trying a delivery (its retry delays together), in milliseconds. */
  senderWindowMs: number;
  /** Reconciliation's per-tenant limits, at their defaults (lib/config/crm.ts). */
  reconcile: { maxInFlight: number; maxCallsPerSecond: number };
}

const ParamsSchema = z.object({
  ingestReservedConcurrency: z.number().int().positive(),
  ingestThrottleRate: z.number().positive(),
  ingestThrottleBurst: z.number().int().positive(),
});
const DefaultParamsSchema = z.object({ params: z.object({ default: z.record(z.string(), z.unknown()) }) });

/** serverless.yml's default stage params: what a stage deploys with unless its own params say otherwise. */
export function defaultParams(): Record<string, unknown> {
  return DefaultParamsSchema.parse(loadServerless()).params.default;
}

/** The queues row events are routed to (every family but the webhook state events). */
export function rowQueues(): Set<QueueKey> {
  const families = FIXED_EVENT_NAMES.flatMap((name) => familyOf(name) ?? []);
  return new Set(families.filter((family) => family.entity !== 'webhook').map((family) => family.queue));
}

/** What the model needs of the DynamoDB writes per event scripts/cost/measure.ts measures. */
export type MeasuredWrites = Pick<Measured, 'wru' | 'indexWru' | 'requests'>;

/**
 * The stage as serverless.yml's default params deploy it, with `overrides` over them as `--param`
 * gives them to a deploy. The DynamoDB writes per event come from `measureWrites`:
 * scripts/cost/measure.ts's run of the real handlers at batches of one (a FIFO mapping has no batching
 * window, so at a few events per second per tenant a batch holds about one message).
 */
export async function loadStageShape(
  overrides: Record<string, number> = {},
  measureWrites: () => Promise<MeasuredWrites> = () => measure('deployed', 1),
): Promise<StageShape> {
  const params = ParamsSchema.parse({ ...defaultParams(), ...overrides });
  const queues = loadDefinitions({ stage: 'capacity' }).queues;
  const carriesRows = rowQueues();
  const workers = loadFunctions(undefined, overrides).flatMap((fn) =>
    fn.sqs.flatMap((source): WorkerShape[] => {
      const queue = queues.find((q) => q.logicalId === source.queueLogicalId);
      // The reconcile queue (the receiver's own, not a QueueKey) carries requests, not row events.
      const key = queue?.key;
      if (!queue || key === undefined || key === 'reconcile' || !carriesRows.has(key)) return [];
      return [
        {
          function: fn.name,
          queue: key,
          batchSize: source.batchSize,
          maximumConcurrency: source.maximumConcurrency,
          highThroughput:
            queue.attributes.DeduplicationScope === 'messageGroup' &&
            queue.attributes.FifoThroughputLimit === 'perMessageGroupId',
          visibilityTimeoutSeconds: queue.visibilityTimeout,
        },
      ];
    }),
  );
  const writes = await measureWrites();
  const writeRequests = (writes.requests.PutItem ?? 0) + (writes.requests.UpdateItem ?? 0);
  const crm = readCrmConfig({
    CRM_API_URL: 'https://crm.example/{ContextIdentifier}/api',
    CRM_CREDENTIALS: '{}',
  });
  if (!crm.enabled) throw new Error('lib/config/crm.ts: reconciliation off with CRM_API_URL set');
  return {
    ingestReservedConcurrency: params.ingestReservedConcurrency,
    ingestThrottleRate: params.ingestThrottleRate,
    ingestThrottleBurst: params.ingestThrottleBurst,
    ingestMs: ASSUMPTIONS.ingestMs,
    workerMsPerEvent: ASSUMPTIONS.workerMsPerEvent,
    workers,
    unitsPerWrite: writeRequests === 0 ? 1 : (writes.wru + writes.indexWru) / writeRequests,
    tenantItemWritesPerEvent: writes.requests.UpdateItem ?? 0,
    senderWindowMs: REAL_RETRY_DELAYS_MS[0] + REAL_RETRY_DELAYS_MS[1],
    reconcile: { maxInFlight: crm.maxInFlight, maxCallsPerSecond: crm.maxCallsPerSecond },
  };
}
