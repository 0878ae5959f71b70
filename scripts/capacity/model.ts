/**
 * The capacity model: for a load (tenants × events per second, a peak factor) in a region, the ceiling
 * of each stage a delivery passes, in events per second, from AWS's default quotas (quotas.ts) and the
 * stage's own settings (shape.ts), and the first one the load reaches. Arithmetic only: no I/O.
 *
 * What must take what: the edge (API Gateway, the ingest, its SendMessage) answers the sender while it
 * waits, so it must take the peak; the queues hold a peak for the workers, which must take the
 * sustained rate and drain the backlog afterwards; one tenant's and one row's limits take that tenant's
 * peak.
 */
import { quota, type Region } from './quotas.js';
import type { StageShape } from './shape.js';

export interface Load {
  tenants: number;
  eventsPerSecond: number;
  /** One tenant's peak over its average. */
  peak: number;
  /** The share of tenants at their peak at the same moment (1: all at once, the conservative reading). */
  peakShare: number;
  region: Region;
  /** The CRM delivers to the ingest's function URL instead of the HTTP API. */
  functionUrl: boolean;
  /** Subscriptions exist: every event is published, and matches one subscription's target. */
  publishes: boolean;
}

export type Against = 'peak' | 'sustained' | 'tenant peak';

export interface Stage {
  name: string;
  against: Against;
  /** Events per second the stage takes (for `tenant peak`: one tenant's). */
  ceiling: number;
  /** The load it meets, in the same unit. */
  load: number;
  /** What moves the ceiling. */
  moves: string;
}

export interface Capacity {
  sustained: number;
  peak: number;
  tenantPeak: number;
  stages: Stage[];
  /** The stage with the highest load over ceiling (over 1: a bottleneck). */
  first: Stage;
  /** Tenants (at this rate and peak) the stage serves before its first stage-wide limit. */
  maxTenants: number;
  /** Checks on the settings themselves, each a sentence; empty when they hold. */
  warnings: string[];
  /** The receiver's own limits outside the path of a healthy delivery. */
  limits: {
    /** Failing events per second per queue that fill SQS's in-flight limit (each held a visibility timeout). */
    failingToFillInFlight: number;
    /** Reconciliation with every tenant reconciling at once: CRM API calls per second, and calls in flight. */
    reconcileCallsPerSecond: number;
    reconcileInFlight: number;
    /** Events per second one row (one message group, processed one message at a time) takes. */
    rowEventsPerSecond: number;
  };
}

const perSecond = (ms: number) => 1000 / ms;

/** What a setting's `moves` adds when the load needs more executions than the account's default allows. */
const beyond = (needed: number, allowed: number) =>
  needed > allowed
    ? `; this load needs ${needed.toLocaleString('en-US')} executions, more than the ${allowed.toLocaleString('en-US')} the account's default allows: a quota raise, or cells of accounts`
    : '';

/** Each stage's ceiling for `load` on a stage shaped as `shape`, and the first bottleneck. */
export function capacity(shape: StageShape, load: Load): Capacity {
  const q = (key: Parameters<typeof quota>[0]) => quota(key, load.region);
  const sustained = load.tenants * load.eventsPerSecond;
  const peak = sustained * (1 + load.peakShare * (load.peak - 1));
  const tenantPeak = load.eventsPerSecond * load.peak;
  const ingestRate = perSecond(shape.ingestMs);
  const workerRate = perSecond(shape.workerMsPerEvent);
  const account = q('lambdaConcurrency');
  const unreserved = account - shape.ingestReservedConcurrency;
  const highThroughput = shape.workers.every((w) => w.highThroughput);
  const sqsTps = highThroughput ? q('sqsFifoHighThroughputTps') : q('sqsFifoPartitionTps');
  const stages: Stage[] = [];
  const add = (name: string, against: Against, ceiling: number, moves: string) =>
    stages.push({
      name,
      against,
      ceiling,
      load: against === 'peak' ? peak : against === 'sustained' ? sustained : tenantPeak,
      moves,
    });

  if (!load.functionUrl) {
    add(
      'API Gateway account quota',
      'peak',
      q('apiGatewayRps'),
      'a quota raise (shared by every API of the account), or the function URL (--function-url)',
    );
    add(
      'route throttle (ingestThrottleRate)',
      'peak',
      shape.ingestThrottleRate,
      `ingestThrottleRate, up to the account quota (${q('apiGatewayRps').toLocaleString('en-US')}/s)`,
    );
  }
  add(
    'ingest reserved concurrency (ingestReservedConcurrency)',
    'peak',
    shape.ingestReservedConcurrency * ingestRate,
    `ingestReservedConcurrency (${shape.ingestMs} ms per delivery: ${Math.round(ingestRate)}/s per execution), up to the account's concurrency less ${q('lambdaUnreservedMinimum')}${beyond(Math.ceil(peak / ingestRate), account - q('lambdaUnreservedMinimum'))}`,
  );
  // A step from the sustained rate to the peak must be served within the sender's retries: new
  // environments come at Lambda's scaling rate, and each reads the secrets parameter once.
  const windowS = shape.senderWindowMs / 1000;
  add(
    'ingest scale-out: Lambda scaling rate',
    'peak',
    sustained + (q('lambdaScalingRate') / 10) * windowS * ingestRate,
    'not adjustable: cells of accounts, or keep executions warm (a higher sustained rate)',
  );
  add(
    'ingest scale-out: SSM GetParameter (standard throughput)',
    'peak',
    sustained + q('ssmGetParameterTps') * windowS * ingestRate,
    'Parameter Store\'s higher throughput setting (docs/capacity.md, "Secrets at scale-out")',
  );
  add(
    `SQS FIFO SendMessage per queue${highThroughput ? ' (high throughput mode)' : ''}`,
    'peak',
    sqsTps,
    'queue sharding by context hash (several queues per entity), or cells of accounts',
  );
  const mapped = shape.workers.reduce((sum, w) => sum + w.maximumConcurrency, 0);
  add(
    `row workers' maximumConcurrency together (${shape.workers.map((w) => `${w.function} ${w.maximumConcurrency}`).join(', ')})`,
    'sustained',
    mapped * workerRate,
    `the mappings' maximumConcurrency params (${shape.workerMsPerEvent} ms per event: ${Math.round(workerRate)}/s per execution), each sized for its queue's share of the events${beyond(Math.ceil(sustained / workerRate), unreserved)}`,
  );
  add(
    'Lambda account concurrency (the workers share what the ingest does not reserve)',
    'sustained',
    unreserved * workerRate,
    'a quota raise (Lambda concurrent executions), or cells of accounts',
  );
  if (load.publishes) {
    add(
      'EventBridge PutEvents (one call per batch, batches of one)',
      'sustained',
      q('eventBridgePutEventsTps'),
      'a quota raise (adjustable), or fuller batches',
    );
    add(
      'EventBridge invocations (one matched target per event)',
      'sustained',
      q('eventBridgeInvocationsTps'),
      'a quota raise (adjustable); past it deliveries are delayed, not dropped',
    );
  }
  add(
    'DynamoDB per table (one write per event per table)',
    'sustained',
    q('dynamoTableWru') / shape.unitsPerWrite,
    `a quota raise (adjustable); a new table takes ${q('dynamoNewTableWru').toLocaleString('en-US')} WRU/s at once: pre-warm it or ramp over 30 minutes`,
  );
  if (shape.tenantItemWritesPerEvent > 0)
    add(
      "one tenant's marker item (one DynamoDB partition)",
      'tenant peak',
      q('dynamoPartitionWru') / (shape.tenantItemWritesPerEvent * shape.unitsPerWrite),
      'not adjustable: fewer marker writes per event (fuller batches, or a marker written at most once per N seconds)',
    );

  const ratio = (s: Stage) => s.load / s.ceiling;
  const first = stages.reduce((a, b) => (ratio(b) > ratio(a) ? b : a));
  const stageWide = stages.filter(
    (s) => s.against !== 'tenant peak' && !s.name.startsWith('ingest scale-out'),
  );
  const maxTenants = Math.floor(Math.min(...stageWide.map((s) => (load.tenants * s.ceiling) / s.load)));
  const warnings: string[] = [];
  if (shape.ingestReservedConcurrency > account - q('lambdaUnreservedMinimum'))
    warnings.push(
      `ingestReservedConcurrency ${shape.ingestReservedConcurrency} leaves less than ${q('lambdaUnreservedMinimum')} unreserved of the account's ${account}: the deploy fails`,
    );
  if (!load.functionUrl && shape.ingestThrottleBurst > q('apiGatewayBurst'))
    warnings.push(
      `ingestThrottleBurst ${shape.ingestThrottleBurst} is above the account's API Gateway burst of ${q('apiGatewayBurst')}, which applies first`,
    );
  if (sustained * shape.unitsPerWrite > q('dynamoNewTableWru'))
    warnings.push(
      `a new table takes ${q('dynamoNewTableWru').toLocaleString('en-US')} WRU/s at once, ${Math.round(q('dynamoNewTableWru') / shape.unitsPerWrite).toLocaleString('en-US')} events/s: bring tenants over in steps (it doubles its previous peak within 30 minutes) or pre-warm the tables (WarmThroughput)`,
    );
  if (mapped > unreserved)
    warnings.push(
      `the row workers' maximumConcurrency add up to ${mapped}, more than the ${unreserved} executions the ingest leaves: after a backlog they throttle each other and messages count receives toward the DLQ`,
    );
  const visibility = Math.max(...shape.workers.map((w) => w.visibilityTimeoutSeconds));
  const limits = {
    failingToFillInFlight: q('sqsFifoInFlight') / visibility,
    reconcileCallsPerSecond: load.tenants * shape.reconcile.maxCallsPerSecond,
    reconcileInFlight: load.tenants * shape.reconcile.maxInFlight,
    rowEventsPerSecond: Math.min(workerRate, q('sqsFifoPartitionTps')),
  };
  return { sustained, peak, tenantPeak, stages, first, maxTenants, warnings, limits };
}
