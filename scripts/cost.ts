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
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { type AwsClientStub, mockClient } from 'aws-sdk-client-mock';
import { loadAccessLogFormat } from '../infra/definitions.js';
import { parseDeliveryEvent } from '../lib/events/index.js';
import { isRowEvent } from '../lib/events/registry.js';
import { METRICS_NAMESPACE } from '../lib/metrics.js';
import type { Row } from '../lib/model/types.js';
import { apply } from '../lib/projection.js';
import { contentHash } from '../lib/recognition.js';
import { toRowItem } from '../lib/store/row-item.js';
import {
  buildSampleBody,
  buildSampleDelivery,
  dotNetTimestamp,
  sampleHttpApiEvent,
} from '../tools/samples.js';

/** us-east-1 list prices (USD), 2025. */
export const PRICES = {
  httpApiPerRequest: 1.0 / 1e6,
  lambdaPerRequest: 0.2 / 1e6,
  lambdaArmPerGbSecond: 0.0000133334,
  sqsFifoPerRequest: 0.5 / 1e6,
  dynamoPerWru: 0.625 / 1e6,
  dynamoPerRru: 0.125 / 1e6,
  dynamoStoragePerGbMonth: 0.25,
  logsPerGb: 0.5,
  /** Custom events put on a bus, per 64 KB chunk of an entry (ours are well under 64 KB). */
  eventBridgePerEntry: 1.0 / 1e6,
  apiDestinationPerInvocation: 0.2 / 1e6,
};

/**
 * Worker batch sizes priced. FIFO event source mappings have no batching window: a batch holds what
 * the queue has at that moment, so at a few events per second or less it holds about one message.
 */
export const BATCH_SIZES = [1, 2, 5, 10] as const;

/** What the stack is configured with, and estimated durations (see docs/deploy.md). */
export const ASSUMPTIONS = {
  ingestMemoryGb: 0.25,
  ingestMs: 30,
  workerMemoryGb: 0.25,
  workerMsPerEvent: 25,
  /** CloudWatch Logs bills each log event's message plus 26 bytes. */
  logEventOverheadBytes: 26,
  /** EVENT_RETENTION_DAYS by default: how long a history item and its index entry are stored. */
  eventRetentionDays: 30,
  /** DynamoDB adds 100 bytes to each index entry, in both its write size and its storage. */
  indexEntryOverheadBytes: 100,
};

/**
 * Lambda's own START, END and REPORT lines of one invocation in the Text log format. With the JSON
 * format and `SystemLogLevel: WARN` (serverless.yml) they are not written at all.
 */
export function platformLines(): string[] {
  const id = randomUUID();
  return [
    `START RequestId: ${id} Version: $LATEST`,
    `END RequestId: ${id}`,
    `REPORT RequestId: ${id}\tDuration: 23.61 ms\tBilled Duration: 24 ms\tMemory Size: 256 MB\tMax Memory Used: 94 MB\t`,
  ];
}

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

export interface Measured {
  /** DynamoDB write and read units and requests per event. */
  wru: number;
  rru: number;
  requests: Record<string, number>;
  /** Of `wru`: the puts of the history and the row (the floor), the marker, the published notes. */
  putWru: number;
  markerWru: number;
  noteWru: number;
  /** PutEvents entries and calls per event. */
  entries: number;
  putEventsCalls: number;
  /** Bytes and lines the ingest and the worker print per event (their own, without Lambda's). */
  logBytes: number;
  logLines: number;
  /** Of `logBytes` and `logLines`: the EMF lines, the metrics the alarms read (the floor). */
  metricLogBytes: number;
  metricLogLines: number;
  /** Bytes of the HTTP API's access log line per event (one per request), without the billed overhead. */
  accessLogBytes: number;
  /** Writes to, and bytes stored in, the events table's EventId index per event. */
  indexWru: number;
  indexBytes: number;
  /** Writes to, and bytes stored in, the rows table's byRowSet index per event (one entry per new row). */
  rowIndexWru: number;
  rowIndexBytes: number;
}

/**
 * One access log line as API Gateway writes it: `format` (serverless.yml) with each `$context` variable
 * replaced by its value in `values`. Throws on a variable without a value, so a field added to the format
 * is priced too.
 */
export function accessLogLine(format: string, values: Record<string, string>): string {
  return format.replace(/\$context\.[A-Za-z]+(?:\.[A-Za-z]+)*/g, (variable) => {
    const value = values[variable];
    if (value === undefined) throw new Error(`scripts/cost.ts has no sample value for ${variable}`);
    return value;
  });
}

/**
 * The `$context` values of one delivery: what the request and the ingest's answer say, and what API
 * Gateway adds (a 16-character request id, its time stamp, the latencies the cost model assumes).
 */
function accessLogValues(
  event: APIGatewayProxyEventV2,
  answer: { statusCode: number; body?: string },
): Record<string, string> {
  const { http } = event.requestContext;
  return {
    '$context.requestId': 'Jr0aUhcpDoEEM7Q=',
    '$context.requestTime': '14/May/2025:10:12:32 +0000',
    '$context.identity.sourceIp': http.sourceIp,
    '$context.identity.userAgent': event.headers['user-agent'] ?? '-',
    '$context.httpMethod': http.method,
    '$context.routeKey': event.routeKey,
    '$context.protocol': http.protocol,
    '$context.status': String(answer.statusCode),
    '$context.responseLength': String(Buffer.byteLength(answer.body ?? '')),
    '$context.responseLatency': String(ASSUMPTIONS.ingestMs + 4),
    // Lambda's own answer to the invoke, not the function's status.
    '$context.integrationStatus': '200',
    '$context.integrationLatency': String(ASSUMPTIONS.ingestMs),
    '$context.integrationErrorMessage': '-',
    '$context.error.message': '-',
  };
}

const STAGE_ENV = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'cost-model',
  AWS_SECRET_ACCESS_KEY: 'cost-model',
  POWERTOOLS_SERVICE_NAME: 'crm-webhook-receiver',
  POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
  CONTACT_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/contact.fifo',
  ACTIVITY_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/activity.fifo',
  WEBHOOK_STATE_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/webhook-state.fifo',
  ENTITIES_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/entities.fifo',
  PARKED_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/parked.fifo',
  WEBHOOK_SECRET: 'cost-model-secret',
  ROWS_TABLE: 'rows',
  EVENTS_TABLE: 'events',
  WEBHOOKS_TABLE: 'webhooks',
};

/** What serverless.yml sets on the workers when subscriptions.yml has any. */
const PUBLISH_ENV = {
  PUBLISH_EVENTS: 'true',
  EVENT_BUS_NAME: 'crm-webhook-receiver-prod',
};

/** The log settings a deployed function runs with. */
export const LOG_SETUPS = {
  /** serverless.yml on AWS: JSON format, so Lambda sets AWS_LAMBDA_LOG_LEVEL, which Powertools obeys. */
  deployed: { POWERTOOLS_LOG_LEVEL: 'WARN', AWS_LAMBDA_LOG_LEVEL: 'INFO', AWS_LAMBDA_LOG_FORMAT: 'JSON' },
  /** The Text format (before advanced logging) with the prod stage's POWERTOOLS_LOG_LEVEL. */
  textWarn: { POWERTOOLS_LOG_LEVEL: 'WARN' },
} as const;

/**
 * One row's stream — a contact.created (the spec's body) then nine contact.changed — delivered to the
 * real ingest handler, then the ten queued messages in batches of `batchSize` to the real
 * contact-worker handler (one warm module, as one Lambda instance), with the environment `logSetup`
 * adds. One context and webhook, as for a receiver serving one CRM tenant; the ten events reach the
 * worker within the marker's interval, so it writes the marker once. With `publish`, the workers publish
 * to a recording bus (PUBLISH_EVENTS, as with subscriptions).
 */
export async function measure(
  logSetup: keyof typeof LOG_SETUPS,
  batchSize: number,
  publish = false,
): Promise<Measured> {
  const saved = { ...process.env };
  Object.assign(process.env, STAGE_ENV, LOG_SETUPS[logSetup], publish ? PUBLISH_ENV : {});
  const sqs = mockClient(SQSClient);
  const dynamo = mockClient(DynamoDBDocumentClient);
  const bus = mockClient(EventBridgeClient);
  const published = { entries: 0, calls: 0 };
  bus.on(PutEventsCommand).callsFake((input: { Entries?: unknown[] }) => {
    published.calls++;
    published.entries += input.Entries?.length ?? 0;
    return { FailedEntryCount: 0, Entries: (input.Entries ?? []).map(() => ({ EventId: randomUUID() })) };
  });
  // The SDK's warning about Node 20 is this machine's, not Lambda's (nodejs22.x): not counted.
  const emitWarning = process.emitWarning;
  process.emitWarning = () => undefined;
  const output = captureOutput();
  try {
    const queued: SQSRecord[] = [];
    // Async, as the real client: the ingest's deadline races the promise `send` returns.
    sqs.on(SendMessageCommand).callsFake(async (input) => {
      queued.push(toSqsRecord(input));
      return { MessageId: randomUUID(), SequenceNumber: '1' };
    });
    const table = recordDynamo(dynamo);
    // A fresh module per level: each handler reads its environment once, at import.
    const variant = `logs=${logSetup}&batch=${batchSize}&publish=${publish}`;
    const ingest = await import(`../functions/ingest.ts?${variant}`);
    const worker = await import(`../functions/contact-worker.ts?${variant}`);

    const names = ['contact.created', ...Array(9).fill('contact.changed')] as const;
    const accessLogFormat = loadAccessLogFormat();
    let accessLogBytes = 0;
    const start = Date.now();
    for (const [i, name] of names.entries()) {
      const body = buildSampleBody(name, {
        primaryKey: 418_233,
        timestamp: dotNetTimestamp(new Date(start + i * 1000)),
      });
      const delivery = buildSampleDelivery(body, { secret: STAGE_ENV.WEBHOOK_SECRET });
      const event = sampleHttpApiEvent(delivery);
      const response = await ingest.handler(event, lambdaContext('ingest'));
      if (response.statusCode !== 200)
        throw new Error(`ingest answered ${response.statusCode}: ${response.body}`);
      accessLogBytes += Buffer.byteLength(accessLogLine(accessLogFormat, accessLogValues(event, response)));
    }
    for (let i = 0; i < queued.length; i += batchSize) {
      const batch = await worker.handler(
        { Records: queued.slice(i, i + batchSize) } satisfies SQSEvent,
        lambdaContext('contactWorker'),
      );
      if (batch.batchItemFailures.length > 0) throw new Error('the worker failed records');
    }

    const n = names.length;
    return {
      wru: table.wru / n,
      rru: table.rru / n,
      requests: Object.fromEntries(Object.entries(table.requests).map(([k, v]) => [k, v / n])),
      putWru: table.putWru / n,
      markerWru: table.markerWru / n,
      noteWru: table.noteWru / n,
      entries: published.entries / n,
      putEventsCalls: published.calls / n,
      logBytes: output.bytes / n,
      logLines: output.lines / n,
      metricLogBytes: output.metricBytes / n,
      metricLogLines: output.metricLines / n,
      accessLogBytes: accessLogBytes / n,
      indexWru: table.indexWru / n,
      indexBytes: table.indexBytes / n,
      rowIndexWru: table.rowIndexWru / n,
      rowIndexBytes: table.rowIndexBytes / n,
    };
  } finally {
    output.restore();
    process.emitWarning = emitWarning;
    sqs.restore();
    dynamo.restore();
    bus.restore();
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  }
}

/**
 * Serves GetItem/PutItem/UpdateItem from memory and counts their units from the real item sizes; a
 * history item with an `eventId` also writes an entry of the events table's keys-only EventId index.
 */
function recordDynamo(dynamo: AwsClientStub<DynamoDBDocumentClient>) {
  const items = new Map<string, Record<string, unknown>>();
  const counts = {
    wru: 0,
    rru: 0,
    requests: { GetItem: 0, PutItem: 0, UpdateItem: 0 },
    putWru: 0,
    markerWru: 0,
    noteWru: 0,
    indexWru: 0,
    indexBytes: 0,
    rowIndexWru: 0,
    rowIndexBytes: 0,
  };
  const keyOf = (table: string, item: Record<string, unknown>) =>
    `${table}:${JSON.stringify(table === 'rows' ? { rowKey: item.rowKey } : { rowKey: item.rowKey, seq: item.seq })}`;
  dynamo.on(GetCommand).callsFake((input: { TableName: string; Key: Record<string, unknown> }) => {
    counts.requests.GetItem++;
    const item = items.get(keyOf(input.TableName, input.Key));
    counts.rru += units(item === undefined ? 1 : itemBytes(item), 4096); // strongly consistent read
    return { Item: item === undefined ? undefined : structuredClone(item) };
  });
  dynamo.on(PutCommand).callsFake((input: { TableName: string; Item: Record<string, unknown> }) => {
    counts.requests.PutItem++;
    const wru = units(itemBytes(input.Item), 1024);
    counts.wru += wru;
    counts.putWru += wru;
    const { rowKey, seq, eventId } = input.Item;
    if (input.TableName === STAGE_ENV.EVENTS_TABLE && eventId !== undefined) {
      const entry = itemBytes({ eventId, rowKey, seq }) + ASSUMPTIONS.indexEntryOverheadBytes;
      counts.indexWru += units(entry, 1024);
      counts.indexBytes += entry;
    }
    // The rows table's byRowSet index: written when a row is created, its keys never change after.
    const { rowSet, rowPk } = input.Item;
    if (
      input.TableName === STAGE_ENV.ROWS_TABLE &&
      rowSet !== undefined &&
      !items.has(keyOf(input.TableName, input.Item))
    ) {
      const entry = itemBytes({ rowKey, rowSet, rowPk }) + ASSUMPTIONS.indexEntryOverheadBytes;
      counts.rowIndexWru += units(entry, 1024);
      counts.rowIndexBytes += entry;
    }
    items.set(keyOf(input.TableName, input.Item), structuredClone(input.Item));
    return {};
  });
  dynamo.on(UpdateCommand).callsFake((input: { TableName: string; Key: Record<string, unknown> }) => {
    counts.requests.UpdateItem++;
    if (input.TableName === STAGE_ENV.EVENTS_TABLE) {
      // The published note: an update costs the larger of the item before and after, the history item.
      const item = items.get(keyOf(input.TableName, input.Key));
      const wru = units(item === undefined ? 1 : itemBytes(item), 1024);
      counts.wru += wru;
      counts.noteWru += wru;
    } else {
      counts.wru += 1; // the last-accepted marker, under 1 KB
      counts.markerWru += 1;
    }
    return {};
  });
  return counts;
}

/** Counts what is written to stdout and stderr (Powertools writes there directly) and keeps it quiet. */
function captureOutput() {
  const streams = [process.stdout, process.stderr];
  const writes = streams.map((stream) => stream.write);
  const restore = () => {
    for (const [i, stream] of streams.entries()) stream.write = writes[i]!;
  };
  const counted = { bytes: 0, lines: 0, metricBytes: 0, metricLines: 0, restore };
  for (const stream of streams) {
    stream.write = ((chunk: string | Uint8Array) => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      for (const line of text.split('\n')) {
        if (line.length === 0) continue;
        counted.bytes += Buffer.byteLength(line);
        counted.lines++;
        if (line.includes('"_aws":')) {
          counted.metricBytes += Buffer.byteLength(line);
          counted.metricLines++;
        }
      }
      return true;
    }) as typeof stream.write;
  }
  return counted;
}

function toSqsRecord(input: {
  MessageBody?: string;
  MessageGroupId?: string;
  MessageDeduplicationId?: string;
  MessageAttributes?: Record<string, { DataType?: string; StringValue?: string }>;
}): SQSRecord {
  return {
    messageId: randomUUID(),
    receiptHandle: randomUUID(),
    body: input.MessageBody ?? '',
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: String(Date.now()),
      SenderId: 'ingest',
      ApproximateFirstReceiveTimestamp: String(Date.now()),
      MessageGroupId: input.MessageGroupId ?? '',
      MessageDeduplicationId: input.MessageDeduplicationId ?? '',
    },
    messageAttributes: Object.fromEntries(
      Object.entries(input.MessageAttributes ?? {}).map(([name, value]) => [
        name,
        { dataType: value.DataType ?? 'String', stringValue: value.StringValue ?? '' },
      ]),
    ),
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:contact.fifo',
    awsRegion: 'us-east-1',
  };
}

function lambdaContext(name: string): Context {
  const functionName = `crm-webhook-receiver-prod-${name}`;
  return {
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    memoryLimitInMB: '256',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: '2025/05/14/[$LATEST]0123456789abcdef0123456789abcdef',
    callbackWaitsForEmptyEventLoop: false,
    getRemainingTimeInMillis: () => 6000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

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

function table(lines: readonly CostLine[]): string[] {
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

// ---------------------------------------------------------------- reconciliation

/**
 * What reconciliation assumes (docs/deploy.md, "Cost per million events"): the reconcile function waits on
 * the CRM's API most of its time, one archive page answering `rowsPerPage` rows in about `pageMs`; it sends
 * snapshots 10 to a SendMessageBatch; the poll (`reconcilePoll`) is scheduled every minute (a schedule's
 * finest step) and polls the CRM when RECONCILE_POLL_SECONDS is due, in about `pollMs`.
 */
export const RECONCILE_ASSUMPTIONS = {
  memoryGb: 0.25,
  rowsPerPage: 50,
  pageMs: 400,
  snapshotsPerBatch: 10,
  pollMs: 400,
  /** An invocation with no poll due: one conditional write that fails. */
  idleMs: 30,
  /** RECONCILE_POLL_SECONDS by default. */
  pollSeconds: 300,
};

/**
 * Reconciliation's cost at AWS list prices, apart from the live events' table: per reconciled row that
 * changes its row (its share of the archive page the reconcile function waits for, its SendMessageBatch
 * entry, and the worker applying the snapshot as it applies a live event: its queue receive and delete,
 * invocation, duration, and at most the writes of one event); per row the CRM did not change (its share
 * of the page, the reconcile's read of the stored row, and no message, no worker: lib/reconcile/run/snapshots.ts);
 * and per poll (one scheduled invocation; a scheduled EventBridge rule's events cost nothing). The CRM's
 * own API calls are free here and counted in the `per` column.
 */
export function reconcileCostRows(workerBatchSize = 1): {
  perRow: CostLine[];
  perUnchangedRow: CostLine[];
  perPoll: CostLine[];
} {
  const r = RECONCILE_ASSUMPTIONS;
  const p = PRICES;
  const a = ASSUMPTIONS;
  const gbSeconds = (ms: number, gb: number) => (ms / 1000) * gb * p.lambdaArmPerGbSecond;
  const line = (item: string, per: string, dollars: number): CostLine => ({
    item,
    per,
    dollars,
    floor: true,
  });
  const perRow = [
    line('CRM API calls', `1 / ${r.rowsPerPage} archive page (the CRM's quota, not AWS's)`, 0),
    line(
      'Reconcile Lambda duration',
      `${r.pageMs} ms per page / ${r.rowsPerPage} rows × ${r.memoryGb * 1024} MB arm64`,
      gbSeconds(r.pageMs / r.rowsPerPage, r.memoryGb),
    ),
    line(
      'SQS FIFO: the snapshot',
      `1 / ${r.snapshotsPerBatch} SendMessageBatch + (1 receive + 1 delete batch) / ${workerBatchSize}`,
      (1 / r.snapshotsPerBatch + 2 / workerBatchSize) * p.sqsFifoPerRequest,
    ),
    line('Worker Lambda requests', `1 / ${workerBatchSize} invocation`, p.lambdaPerRequest / workerBatchSize),
    line(
      'Worker Lambda duration',
      `${a.workerMsPerEvent} ms × ${a.workerMemoryGb * 1024} MB arm64`,
      gbSeconds(a.workerMsPerEvent, a.workerMemoryGb),
    ),
    // The reconcile reads the row once (eventually consistent) to count it as changed or not; the worker
    // reads it again. A snapshot equal to the row writes one UpdateItem (its order keys); one that
    // changes it, a row and a record.
    line(
      'DynamoDB',
      "0.5 RRU (the reconcile's read) + 1 GetItem + 1 to 2 WRU",
      1.5 * p.dynamoPerRru + 2 * p.dynamoPerWru,
    ),
  ];
  // A row the CRM did not change: the page's share and the read the reconcile makes anyway (a row under
  // 4 KB, eventually consistent). Its order keys stay where they are when they are at or after the CRM's
  // last write of it (its `updated`/`registered`): the row holds what the CRM wrote then, from that
  // write's own event or an earlier snapshot, and any event still to come is older than them or newer
  // than the read. Only a row held from before that write (a snapshot equal to it, its keys older) gets
  // one conditional PutItem: priced separately in reconcileSection, it is not the usual case.
  const perUnchangedRow = [
    perRow[0]!,
    perRow[1]!,
    line('SQS, worker', 'none: no message, no invocation', 0),
    line('DynamoDB', "0.5 RRU (the reconcile's read of the stored row); no write", 0.5 * p.dynamoPerRru),
  ];
  const perPoll = [
    line('Scheduled rule', '1 event (free)', 0),
    line('Poll Lambda requests', '1 invocation', p.lambdaPerRequest),
    line(
      'Poll Lambda duration',
      `${r.pollMs} ms × ${r.memoryGb * 1024} MB arm64`,
      gbSeconds(r.pollMs, r.memoryGb),
    ),
    line('CRM API calls', "1 webhook list per context (the CRM's quota)", 0),
  ];
  return { perRow, perUnchangedRow, perPoll };
}

/**
 * Write units of one conditional put of a contact row as the workers store it (lib/store/row-item.ts)
 * after the stream {@link measure} delivers: the created event of the spec's sample, then nine changed.
 */
export function contactRowWru(): number {
  let row: Row | undefined;
  const start = Date.parse('2025-05-14T10:00:00Z');
  for (const [i, name] of ['contact.created', ...Array(9).fill('contact.changed')].entries()) {
    const body = buildSampleBody(name, {
      primaryKey: 418_233,
      timestamp: dotNetTimestamp(new Date(start + i * 1000)),
    });
    const parsed = parseDeliveryEvent(body);
    if (!parsed.ok || !isRowEvent(parsed.event)) throw new Error(`the sample ${name} does not parse`);
    row = apply(row, parsed.event, { contentHash: contentHash(JSON.stringify(body), String(body.EventId)) });
  }
  return units(itemBytes(toRowItem(row!, 10)), 1024);
}

/** Reconciliation's two tables, and what the every-minute schedule costs a month at the default interval. */
export async function reconcileSection(): Promise<string[]> {
  const r = RECONCILE_ASSUMPTIONS;
  const p = PRICES;
  const { perRow, perUnchangedRow, perPoll } = reconcileCostRows();
  const keysMoved = contactRowWru() * p.dynamoPerWru;
  const sum = (lines: CostLine[]) => lines.reduce((total, line) => total + line.dollars, 0);
  const minutes = 30.4 * 24 * 60;
  const polls = (30.4 * 86_400) / r.pollSeconds;
  const idle =
    Math.max(0, minutes - polls) *
    (p.lambdaPerRequest + (r.idleMs / 1000) * r.memoryGb * p.lambdaArmPerGbSecond + p.dynamoPerWru);
  return [
    '\n### Reconciliation: $ per million reconciled rows that change their row (worker batches of 1)\n',
    ...table(perRow).map((row) => row.replace('Per event', 'Per row')),
    '\n### Reconciliation: $ per million rows the CRM did not change (a full pass)\n',
    ...table(perUnchangedRow).map((row) => row.replace('Per event', 'Per row')),
    `\nA row held from before the CRM's last write of it (its order keys older) adds one conditional PutItem of ${contactRowWru()} WRU (a contact row): $${((sum(perUnchangedRow) + keysMoved) * 1e6).toFixed(3)} per million such rows.`,
    '\n### Reconciliation: $ per million polls\n',
    ...table(perPoll).map((row) => row.replace('Per event', 'Per poll')),
    `\nPolling every ${r.pollSeconds} s: ${Math.round(polls)} polls and ${Math.round(minutes - polls)} idle scheduled invocations a month, $${(sum(perPoll) * polls + idle).toFixed(4)} a month.`,
    `A scheduled full pass (RECONCILE_FULL_HOURS) reconciles every stored row: $${(sum(perUnchangedRow) * 1e5).toFixed(4)} per 100,000 unchanged rows a pass ($${(sum(perRow) * 1e5).toFixed(4)} per 100,000 changed ones), and about 0.01 CRM API calls per row.`,
  ];
}

/** The sections `tsx scripts/cost.ts` prints, in order: each returns its lines. */
export const SECTIONS: Array<() => Promise<string[]>> = [workerBatchSection, reconcileSection];

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const section of SECTIONS) console.log((await section()).join('\n'));
}
