/**
 * Cost per million events at list prices, from the requests the stack really makes per event: the
 * contact worker's code runs against a recording DynamoDB client, so item sizes (and so write units)
 * are those of real rows and history records. `tsx scripts/cost.ts` prints the table in docs/deploy.md.
 */
import { pathToFileURL } from 'node:url';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { isRowEvent, parseDeliveryEvent } from '../lib/events/index.js';
import { buildSampleBody, dotNetTimestamp } from '../lib/samples.js';
import { createDynamoStore } from '../lib/store/index.js';
import { processRowEvent } from '../lib/workers/index.js';

/** us-east-1 list prices (USD), 2025. */
export const PRICES = {
  httpApiPerRequest: 1.0 / 1e6,
  lambdaPerRequest: 0.2 / 1e6,
  lambdaArmPerGbSecond: 0.0000133334,
  sqsFifoPerRequest: 0.5 / 1e6,
  dynamoPerWru: 0.625 / 1e6,
  dynamoPerRru: 0.125 / 1e6,
  logsPerGb: 0.5,
};

/** What the stack is configured with, and measured or assumed durations (see docs/deploy.md). */
export const ASSUMPTIONS = {
  batchSize: 10,
  ingestMemoryGb: 0.25,
  ingestMs: 30,
  workerMemoryGb: 0.25,
  workerMsPerEvent: 25,
  /** Platform START/END/REPORT lines, one Powertools log line and one EMF blob per ingest call. */
  logBytesPerEvent: 1_400,
};

/** DynamoDB's item size: attribute names plus values (UTF-8 strings, ~1 byte per 2 digits of numbers). */
export function itemBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (value instanceof Uint8Array) return value.byteLength;
  if (typeof value === 'number') return Math.ceil(String(value).replace(/[-.]/g, '').length / 2) + 1;
  if (typeof value === 'boolean' || value === null || value === undefined) return 1;
  if (Array.isArray(value)) return 3 + value.reduce((sum: number, v) => sum + 1 + itemBytes(v), 0);
  return (
    3 +
    Object.entries(value as Record<string, unknown>).reduce(
      (sum, [name, v]) => sum + Buffer.byteLength(name) + itemBytes(v),
      0,
    )
  );
}

const units = (bytes: number, per: number) => Math.max(1, Math.ceil(bytes / per));

/** DynamoDB requests and units per contact event, averaged over one created and nine changed events. */
export async function measureDynamo(): Promise<{
  wru: number;
  rru: number;
  requests: Record<string, number>;
}> {
  const recorded = mockClient(DynamoDBDocumentClient);
  const items = new Map<string, Record<string, unknown>>();
  let wru = 0;
  let rru = 0;
  const requests: Record<string, number> = { GetItem: 0, PutItem: 0, UpdateItem: 0 };
  recorded.on(GetCommand).callsFake((input: { TableName: string; Key: Record<string, unknown> }) => {
    requests.GetItem = (requests.GetItem ?? 0) + 1;
    const item = items.get(`${input.TableName}:${JSON.stringify(input.Key)}`);
    rru += units(item === undefined ? 1 : itemBytes(item), 4096); // strongly consistent read
    return { Item: item };
  });
  recorded.on(PutCommand).callsFake((input: { TableName: string; Item: Record<string, unknown> }) => {
    requests.PutItem = (requests.PutItem ?? 0) + 1;
    wru += units(itemBytes(input.Item), 1024);
    const key =
      input.TableName === 'rows'
        ? { rowKey: input.Item.rowKey }
        : { rowKey: input.Item.rowKey, seq: input.Item.seq };
    items.set(`${input.TableName}:${JSON.stringify(key)}`, input.Item);
    return {};
  });
  recorded.on(UpdateCommand).callsFake(() => {
    requests.UpdateItem = (requests.UpdateItem ?? 0) + 1;
    wru += 1;
    return {};
  });

  const store = createDynamoStore({
    client: DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' })),
    tables: { rows: 'rows', events: 'events', webhooks: 'webhooks' },
    retentionDays: 30,
  });
  const deps = {
    store,
    hooks: {},
    ignoreAssociateIds: new Set<number>(),
    logger: new Logger({ logLevel: 'SILENT' }),
    metrics: new Metrics({ namespace: 'CostModel', serviceName: 'cost' }),
  };
  const names = ['contact.created', ...Array(9).fill('contact.changed')] as const;
  const start = Date.now();
  for (const [i, name] of names.entries()) {
    const body = buildSampleBody(name, {
      primaryKey: 418_233,
      timestamp: dotNetTimestamp(new Date(start + i * 1000)),
    });
    const parsed = parseDeliveryEvent(body);
    if (!parsed.ok || !isRowEvent(parsed.event)) throw new Error(`sample ${name} did not parse`);
    await processRowEvent(deps, parsed.event, { messageId: `m-${i}`, signatureVerified: true });
  }
  recorded.restore();
  const n = names.length;
  return {
    wru: wru / n,
    rru: rru / n,
    requests: Object.fromEntries(Object.entries(requests).map(([k, v]) => [k, v / n])),
  };
}

export async function costTable(): Promise<Array<[string, string, number]>> {
  const dynamo = await measureDynamo();
  const a = ASSUMPTIONS;
  const p = PRICES;
  const rows: Array<[string, string, number]> = [
    ['API Gateway HTTP API', '1 request', p.httpApiPerRequest],
    ['Ingest Lambda requests', '1 invocation', p.lambdaPerRequest],
    [
      'Ingest Lambda duration',
      `${a.ingestMs} ms × ${a.ingestMemoryGb * 1024} MB arm64`,
      (a.ingestMs / 1000) * a.ingestMemoryGb * p.lambdaArmPerGbSecond,
    ],
    [
      'SQS FIFO',
      `1 SendMessage + (1 receive + 1 delete batch) / ${a.batchSize}`,
      (1 + 2 / a.batchSize) * p.sqsFifoPerRequest,
    ],
    ['Worker Lambda requests', `1 / ${a.batchSize} invocation`, p.lambdaPerRequest / a.batchSize],
    [
      'Worker Lambda duration',
      `${a.workerMsPerEvent} ms × ${a.workerMemoryGb * 1024} MB arm64`,
      (a.workerMsPerEvent / 1000) * a.workerMemoryGb * p.lambdaArmPerGbSecond,
    ],
    [
      'DynamoDB writes',
      `${dynamo.wru.toFixed(2)} WRU (${dynamo.requests.PutItem?.toFixed(1)} PutItem + ${dynamo.requests.UpdateItem?.toFixed(1)} UpdateItem)`,
      dynamo.wru * p.dynamoPerWru,
    ],
    [
      'DynamoDB reads',
      `${dynamo.rru.toFixed(2)} RRU (${dynamo.requests.GetItem?.toFixed(1)} consistent GetItem)`,
      dynamo.rru * p.dynamoPerRru,
    ],
    ['CloudWatch Logs', `~${a.logBytesPerEvent} B ingested`, (a.logBytesPerEvent / 1024 ** 3) * p.logsPerGb],
  ];
  return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const rows = await costTable();
  let total = 0;
  console.log('| Item | Per event | $ per million events |\n|---|---|---:|');
  for (const [item, per, dollars] of rows) {
    total += dollars;
    console.log(`| ${item} | ${per} | ${(dollars * 1e6).toFixed(3)} |`);
  }
  console.log(`| **Total** | | **${(total * 1e6).toFixed(2)}** |`);
}
