import { platformLines } from './log-lines.js';
import { type Measured, measure } from './measure.js';
import { ASSUMPTIONS, BATCH_SIZES, PRICES } from './prices.js';

/** Log bytes billed per event: the handlers' own lines, Lambda's lines unless JSON + system WARN. */
export function logBytesPerEvent(measured: Measured, advancedLogging: boolean, batchSize: number): number {
  const invocations = 1 + 1 / batchSize; // the ingest per event, the worker per batch
  const platform = advancedLogging ? [] : platformLines();
  const platformBytes = platform.reduce((sum, line) => sum + Buffer.byteLength(line), 0);
  const lines = measured.logLines + invocations * platform.length;
  return measured.logBytes + invocations * platformBytes + lines * ASSUMPTIONS.logEventOverheadBytes;
}

/**
 * One line of a cost table. `floor`: what the architecture must pay per event: one HTTP API
 * request, the ingest's invocation, one SendMessage and its share of a receive and a delete, the worker's
 * invocation, one write each for the history and the row, one read of the row, the metric lines the
 * alarms need; with subscriptions, what EventBridge itself charges. `httpApi`: paid only behind the HTTP
 * API (its request and access log), not on the function URL.
 */
export interface CostLine {
  item: string;
  per: string;
  dollars: number;
  floor: boolean;
  httpApi?: boolean;
}

const PER_MILLION = (dollars: number) => (dollars * 1e6).toFixed(3);

/**
 * The events table's EventId index, opt-in (`eventIdIndex: "true"`): one entry per history item, written
 * and stored for the retention period. Not in the tables: a stage has it only when it asks.
 */
export function eventIdIndexCost(measured: Measured): { per: string; dollars: number } {
  const a = ASSUMPTIONS;
  return {
    per: `${measured.indexWru.toFixed(2)} WRU + ${Math.round(measured.indexBytes)} B kept ${a.eventRetentionDays} days (keys only)`,
    dollars:
      measured.indexWru * PRICES.dynamoPerWru +
      (measured.indexBytes / 1024 ** 3) * PRICES.dynamoStoragePerGbMonth * (a.eventRetentionDays / 30.4),
  };
}
const logDollars = (bytes: number) => (bytes / 1024 ** 3) * PRICES.logsPerGb;

/** The lines of one event through the stack at a worker batch size, from a measured run. */
export function costLines(measured: Measured, batchSize: number): CostLine[] {
  const a = ASSUMPTIONS;
  const p = PRICES;
  const logBytes = logBytesPerEvent(measured, true, batchSize);
  const metricBytes = measured.metricLogBytes + measured.metricLogLines * a.logEventOverheadBytes;
  const accessLogBytes = measured.accessLogBytes + a.logEventOverheadBytes;
  const lines: CostLine[] = [
    {
      item: 'API Gateway HTTP API',
      per: '1 request',
      dollars: p.httpApiPerRequest,
      floor: true,
      httpApi: true,
    },
    {
      item: 'HTTP API access logs',
      per: `${Math.round(accessLogBytes)} B in 1 line (JSON, $context only)`,
      dollars: logDollars(accessLogBytes),
      floor: false,
      httpApi: true,
    },
    { item: 'Ingest Lambda requests', per: '1 invocation', dollars: p.lambdaPerRequest, floor: true },
    {
      item: 'Ingest Lambda duration',
      per: `${a.ingestMs} ms × ${a.ingestMemoryGb * 1024} MB arm64`,
      dollars: (a.ingestMs / 1000) * a.ingestMemoryGb * p.lambdaArmPerGbSecond,
      floor: true,
    },
    {
      item: 'SQS FIFO',
      per: `1 SendMessage + (1 receive + 1 delete batch) / ${batchSize}`,
      dollars: (1 + 2 / batchSize) * p.sqsFifoPerRequest,
      floor: true,
    },
    {
      item: 'Worker Lambda requests',
      per: `1 / ${batchSize} invocation`,
      dollars: p.lambdaPerRequest / batchSize,
      floor: true,
    },
    {
      item: 'Worker Lambda duration',
      per: `${a.workerMsPerEvent} ms × ${a.workerMemoryGb * 1024} MB arm64`,
      dollars: (a.workerMsPerEvent / 1000) * a.workerMemoryGb * p.lambdaArmPerGbSecond,
      floor: true,
    },
    {
      item: 'DynamoDB: history and row',
      per: `${measured.putWru.toFixed(2)} WRU (${measured.requests.PutItem?.toFixed(1)} PutItem)`,
      dollars: measured.putWru * p.dynamoPerWru,
      floor: true,
    },
    {
      item: 'DynamoDB: rows index',
      per: `${measured.rowIndexWru.toFixed(2)} WRU (keys only, one entry per new row: a reconcile finds deletes in it)`,
      dollars: measured.rowIndexWru * p.dynamoPerWru,
      floor: false,
    },
    {
      item: 'DynamoDB: last-accepted marker',
      per: `${measured.markerWru.toFixed(2)} WRU (at most 1 UpdateItem per context and webhook per 60 s)`,
      dollars: measured.markerWru * p.dynamoPerWru,
      floor: false,
    },
    {
      item: 'DynamoDB reads',
      per: `${measured.rru.toFixed(2)} RRU (${measured.requests.GetItem?.toFixed(1)} consistent GetItem)`,
      dollars: measured.rru * p.dynamoPerRru,
      floor: true,
    },
    {
      item: 'CloudWatch Logs: metric lines',
      per: `${Math.round(metricBytes)} B in ${measured.metricLogLines.toFixed(1)} EMF lines (the alarms' metrics)`,
      dollars: logDollars(metricBytes),
      floor: true,
    },
    {
      item: 'CloudWatch Logs: other lines',
      per: `${Math.round(logBytes - metricBytes)} B in ${(measured.logLines - measured.metricLogLines).toFixed(1)} lines`,
      dollars: logDollars(logBytes - metricBytes),
      floor: false,
    },
  ];
  if (measured.entries > 0 || measured.noteWru > 0) lines.push(...subscriptionLines(measured));
  // A line that costs nothing and is not part of the floor says nothing.
  return lines.filter((line) => line.floor || line.dollars > 0);
}

/**
 * What subscriptions add per event: the PutEvents entries the workers make (EventBridge bills entries,
 * per 64 KB chunk; ours are far smaller), one API destination invocation per entry for one URL
 * subscription matching it (queue and Lambda targets cost nothing on the bus's side), and the writes
 * the workers make to publish once (the published note).
 */
function subscriptionLines(measured: Measured): CostLine[] {
  const p = PRICES;
  return [
    {
      item: 'EventBridge custom events',
      per: `${measured.entries.toFixed(2)} PutEvents entries (in ${measured.putEventsCalls.toFixed(2)} calls)`,
      dollars: measured.entries * p.eventBridgePerEntry,
      floor: true,
    },
    {
      item: 'EventBridge API destinations',
      per: `${measured.entries.toFixed(2)} invocations (one URL subscription matching each)`,
      dollars: measured.entries * p.apiDestinationPerInvocation,
      floor: true,
    },
    {
      item: 'DynamoDB: published note',
      per: `${measured.noteWru.toFixed(2)} WRU (UpdateItem on the history record)`,
      dollars: measured.noteWru * p.dynamoPerWru,
      floor: false,
    },
  ];
}

/** Total and floor of a table's lines, behind the HTTP API or on the function URL. */
export function totals(lines: readonly CostLine[], on: 'httpApi' | 'functionUrl') {
  const kept = lines.filter((line) => on === 'httpApi' || !line.httpApi);
  const total = kept.reduce((sum, line) => sum + line.dollars, 0);
  const floor = kept.reduce((sum, line) => sum + (line.floor ? line.dollars : 0), 0);
  return { total, floor, ratio: total / floor };
}

export function table(lines: readonly CostLine[]): string[] {
  const { total, floor } = totals(lines, 'httpApi');
  return [
    '| Item | Per event | In the floor | $ per million events |',
    '|---|---|:---:|---:|',
    ...lines.map(
      (line) => `| ${line.item} | ${line.per} | ${line.floor ? 'yes' : ''} | ${PER_MILLION(line.dollars)} |`,
    ),
    `| **Total** (floor ${(floor * 1e6).toFixed(2)}) | | | **${(total * 1e6).toFixed(2)}** |`,
  ];
}

/**
 * Per worker batch size, the measured lines of one event without and with subscriptions, then the
 * summary: total, floor and ratio on the HTTP API and the function URL, and the subscription add-on
 * against what EventBridge itself charges.
 */
export async function workerBatchSection(): Promise<string[]> {
  const out: string[] = [];
  const summary: string[] = [];
  const addOns: string[] = [];
  const cell = ({ total, floor, ratio }: ReturnType<typeof totals>) =>
    `${(total * 1e6).toFixed(2)} / ${(floor * 1e6).toFixed(2)} = ${ratio.toFixed(3)}`;
  for (const batchSize of BATCH_SIZES) {
    const measured = await measure('deployed', batchSize);
    const plain = costLines(measured, batchSize);
    const withSubscriptions = costLines(await measure('deployed', batchSize, true), batchSize);
    const textWarn = await measure('textWarn', batchSize);
    out.push(`\n### Worker batches of ${batchSize}\n`, ...table(plain));
    out.push('\nWith subscriptions (every change published, one URL subscription matching it):\n');
    out.push(...table(withSubscriptions));
    const text = logBytesPerEvent(textWarn, false, batchSize);
    out.push(
      `\nLogs in the Text format at WARN instead: ${Math.round(text)} B ($${PER_MILLION(logDollars(text))}).`,
    );
    summary.push(
      `| ${batchSize} | ${cell(totals(plain, 'httpApi'))} | ${cell(totals(plain, 'functionUrl'))} | ${cell(totals(withSubscriptions, 'httpApi'))} | ${cell(totals(withSubscriptions, 'functionUrl'))} |`,
    );
    const added = withSubscriptions.slice(plain.length);
    const addOn = added.reduce((sum, line) => sum + line.dollars, 0);
    const eventBridge = added.reduce((sum, line) => sum + (line.floor ? line.dollars : 0), 0);
    addOns.push(
      `| ${batchSize} | ${(addOn * 1e6).toFixed(3)} | ${(eventBridge * 1e6).toFixed(3)} | ${(addOn / eventBridge).toFixed(3)} |`,
    );
  }
  out.push(
    '\n### $ per million events: total / floor = ratio, by worker batch size\n',
    '| Batch size | HTTP API | Function URL | HTTP API, subscriptions | Function URL, subscriptions |',
    '|---:|---:|---:|---:|---:|',
    ...summary,
    '\n### Subscription add-on against what EventBridge itself charges ($ per million events)\n',
    '| Batch size | Added with subscriptions | EventBridge (entries, API destinations) | Ratio |',
    '|---:|---:|---:|---:|',
    ...addOns,
  );
  return out;
}
