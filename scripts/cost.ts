/**
 * Cost per million events at list prices, from the requests and log lines the stack really makes per
 * event: the real ingest and contact-worker handlers (functions/) run here, the ingest against a
 * recording SQS client and the worker, on what the ingest queued, against a recording DynamoDB client.
 * Item sizes (so write units) are those of real rows and history records, log bytes those the
 * handlers print at the stage's log level, access log bytes those of serverless.yml's format filled in
 * from the same requests. `tsx scripts/cost.ts` prints the table in docs/deploy.md.
 */
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { type AwsClientStub, mockClient } from 'aws-sdk-client-mock';
import { loadAccessLogFormat } from '../infra/definitions.js';
import { METRICS_NAMESPACE } from '../lib/metrics.js';
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
 * What publishing adds per event (issue 14): nothing without subscriptions (PUBLISH_EVENTS is false),
 * else one PutEvents entry per applied event, the write that notes it published in its history record
 * (so a redrive from the DLQ still publishes what never was), and one API destination call per URL
 * subscription it matches. Delivery to queue and Lambda targets costs nothing on the bus's side.
 */
export function fanoutRows(urlDeliveriesPerEvent: number): Array<[string, string, number]> {
  return [
    ['EventBridge custom events', '1 PutEvents entry (under 64 KB)', PRICES.eventBridgePerEntry],
    ['DynamoDB: published noted', '1 WRU (UpdateItem on the history record)', PRICES.dynamoPerWru],
    [
      'EventBridge API destinations',
      `${urlDeliveriesPerEvent} invocation(s): URL subscriptions matched`,
      urlDeliveriesPerEvent * PRICES.apiDestinationPerInvocation,
    ],
  ];
}

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
  /** Bytes and lines the ingest and the worker print per event (their own, without Lambda's). */
  logBytes: number;
  logLines: number;
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
 * adds. One batch is one context, as for a receiver serving one CRM tenant: at most one last-accepted
 * marker write per batch.
 */
export async function measure(logSetup: keyof typeof LOG_SETUPS, batchSize: number): Promise<Measured> {
  const saved = { ...process.env };
  Object.assign(process.env, STAGE_ENV, LOG_SETUPS[logSetup]);
  const sqs = mockClient(SQSClient);
  const dynamo = mockClient(DynamoDBDocumentClient);
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
    const ingest = await import(`../functions/ingest.ts?logs=${logSetup}&batch=${batchSize}`);
    const worker = await import(`../functions/contact-worker.ts?logs=${logSetup}&batch=${batchSize}`);

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
      logBytes: output.bytes / n,
      logLines: output.lines / n,
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
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  }
}

/**
 * Serves GetItem/PutItem/UpdateItem from memory and counts their units from the real item sizes; a
 * history item with an `eventId` also writes an entry of the events table's keys-only EventId index,
 * and a new row one of the rows table's keys-only byRowSet index.
 */
function recordDynamo(dynamo: AwsClientStub<DynamoDBDocumentClient>) {
  const items = new Map<string, Record<string, unknown>>();
  const counts = {
    wru: 0,
    rru: 0,
    requests: { GetItem: 0, PutItem: 0, UpdateItem: 0 },
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
    counts.wru += units(itemBytes(input.Item), 1024);
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
  dynamo.on(UpdateCommand).callsFake(() => {
    counts.requests.UpdateItem++;
    counts.wru += 1; // the marker item is under 1 KB
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
  const counted = { bytes: 0, lines: 0, restore };
  for (const stream of streams) {
    stream.write = ((chunk: string | Uint8Array) => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      for (const line of text.split('\n')) {
        if (line.length === 0) continue;
        counted.bytes += Buffer.byteLength(line);
        counted.lines++;
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

export async function costTable(batchSize: number): Promise<{
  rows: Array<[string, string, number]>;
  notes: string[];
  /** What only the HTTP API costs per event (its requests and access logs): a function URL saves it. */
  httpApiOnly: number;
}> {
  const deployed = await measure('deployed', batchSize);
  const textWarn = await measure('textWarn', batchSize);
  const a = { ...ASSUMPTIONS, batchSize };
  const p = PRICES;
  const logBytes = logBytesPerEvent(deployed, true, a.batchSize);
  const accessLogBytes = deployed.accessLogBytes + a.logEventOverheadBytes;
  const accessLogs = (accessLogBytes / 1024 ** 3) * p.logsPerGb;
  const rows: Array<[string, string, number]> = [
    ['API Gateway HTTP API', '1 request', p.httpApiPerRequest],
    ['HTTP API access logs', `${Math.round(accessLogBytes)} B in 1 line (JSON, $context only)`, accessLogs],
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
      `${deployed.wru.toFixed(2)} WRU (${deployed.requests.PutItem?.toFixed(1)} PutItem + ${deployed.requests.UpdateItem?.toFixed(1)} UpdateItem)`,
      deployed.wru * p.dynamoPerWru,
    ],
    [
      'DynamoDB EventId index',
      `${deployed.indexWru.toFixed(2)} WRU + ${Math.round(deployed.indexBytes)} B kept ${a.eventRetentionDays} days (keys only)`,
      deployed.indexWru * p.dynamoPerWru +
        (deployed.indexBytes / 1024 ** 3) * p.dynamoStoragePerGbMonth * (a.eventRetentionDays / 30.4),
    ],
    [
      'DynamoDB rows index',
      `${deployed.rowIndexWru.toFixed(2)} WRU + ${Math.round(deployed.rowIndexBytes)} B kept with the row (keys only, one entry per new row: reconcile finds deletes in it)`,
      deployed.rowIndexWru * p.dynamoPerWru,
    ],
    [
      'DynamoDB reads',
      `${deployed.rru.toFixed(2)} RRU (${deployed.requests.GetItem?.toFixed(1)} consistent GetItem)`,
      deployed.rru * p.dynamoPerRru,
    ],
    [
      'CloudWatch Logs',
      `${Math.round(logBytes)} B in ${deployed.logLines.toFixed(1)} lines (JSON, system WARN, app INFO)`,
      (logBytes / 1024 ** 3) * p.logsPerGb,
    ],
  ];
  const dollars = (bytes: number) => ((bytes / 1024 ** 3) * p.logsPerGb * 1e6).toFixed(3);
  const text = logBytesPerEvent(textWarn, false, a.batchSize);
  const withoutInfo = logBytesPerEvent(textWarn, true, a.batchSize);
  const notes = [
    `Logs per event: deployed ${Math.round(logBytes)} B ($${dollars(logBytes)});` +
      ` Text format at WARN ${Math.round(text)} B ($${dollars(text)});` +
      ` JSON with no INFO line per event ${Math.round(withoutInfo)} B ($${dollars(withoutInfo)}).`,
  ];
  return { rows, notes, httpApiOnly: p.httpApiPerRequest + accessLogs };
}

// ---------------------------------------------------------------- reconciliation (issue 25)

/**
 * What reconciliation assumes (docs/deploy.md, "Cost per million events"): the reconcile function waits on
 * the CRM's API most of its time, one archive page answering `rowsPerPage` rows in about `pageMs`; it sends
 * snapshots 10 to a SendMessageBatch; a poll (`reconcilePoll`, every RECONCILE_POLL_SECONDS) lists the
 * receiver's webhooks of a context in one call and runs about `pollMs`.
 */
export const RECONCILE_ASSUMPTIONS = {
  memoryGb: 0.25,
  rowsPerPage: 50,
  pageMs: 400,
  snapshotsPerBatch: 10,
  pollMs: 400,
  /** RECONCILE_POLL_SECONDS by default. */
  pollSeconds: 300,
};

/**
 * Reconciliation's cost at AWS list prices, apart from the live events' table: per reconciled row (its
 * share of the archive page the reconcile function waits for, its SendMessageBatch entry, and the worker
 * applying the snapshot as it applies a live event: its queue receive and delete, invocation, duration,
 * and at most the writes of one event) and per poll (one scheduled invocation; a scheduled EventBridge
 * rule's events cost nothing). The CRM's own API calls are free here and counted in the `per` column.
 */
export function reconcileCostRows(workerBatchSize = 1): {
  perRow: Array<[string, string, number]>;
  perPoll: Array<[string, string, number]>;
} {
  const r = RECONCILE_ASSUMPTIONS;
  const p = PRICES;
  const a = ASSUMPTIONS;
  const gbSeconds = (ms: number, gb: number) => (ms / 1000) * gb * p.lambdaArmPerGbSecond;
  const perRow: Array<[string, string, number]> = [
    ['CRM API calls', `1 / ${r.rowsPerPage} archive page (the CRM's quota, not AWS's)`, 0],
    [
      'Reconcile Lambda duration',
      `${r.pageMs} ms per page / ${r.rowsPerPage} rows × ${r.memoryGb * 1024} MB arm64`,
      gbSeconds(r.pageMs / r.rowsPerPage, r.memoryGb),
    ],
    [
      'SQS FIFO: the snapshot',
      `1 / ${r.snapshotsPerBatch} SendMessageBatch + (1 receive + 1 delete batch) / ${workerBatchSize}`,
      (1 / r.snapshotsPerBatch + 2 / workerBatchSize) * p.sqsFifoPerRequest,
    ],
    ['Worker Lambda requests', `1 / ${workerBatchSize} invocation`, p.lambdaPerRequest / workerBatchSize],
    [
      'Worker Lambda duration',
      `${a.workerMsPerEvent} ms × ${a.workerMemoryGb * 1024} MB arm64`,
      gbSeconds(a.workerMsPerEvent, a.workerMemoryGb),
    ],
    // A snapshot equal to the row writes one UpdateItem (its order keys); one that changes it, a row and a record.
    ['DynamoDB', '1 GetItem + 1 to 2 WRU', p.dynamoPerRru + 2 * p.dynamoPerWru],
  ];
  const perPoll: Array<[string, string, number]> = [
    ['Scheduled rule', '1 event (free)', 0],
    ['Poll Lambda requests', '1 invocation', p.lambdaPerRequest],
    [
      'Poll Lambda duration',
      `${r.pollMs} ms × ${r.memoryGb * 1024} MB arm64`,
      gbSeconds(r.pollMs, r.memoryGb),
    ],
    ['CRM API calls', "1 webhook list per context (the CRM's quota)", 0],
  ];
  return { perRow, perPoll };
}

/** Prints reconciliation's two tables and what polling costs a month at the default interval. */
function printReconcileCosts(): void {
  const { perRow, perPoll } = reconcileCostRows();
  console.log('\n### Reconciliation: $ per million reconciled rows (worker batches of 1)\n');
  printTable(perRow, 'Per million reconciled rows');
  console.log('\n### Reconciliation: $ per million polls\n');
  const poll = printTable(perPoll, 'Per million polls');
  const pollsPerMonth = (30.4 * 86_400) / RECONCILE_ASSUMPTIONS.pollSeconds;
  console.log(
    `\nPolling every ${RECONCILE_ASSUMPTIONS.pollSeconds} s: ${Math.round(pollsPerMonth)} polls, $${(poll * pollsPerMonth).toFixed(4)} a month.`,
  );
}

function printTable(rows: Array<[string, string, number]>, totalLabel: string): number {
  const total = rows.reduce((sum, [, , dollars]) => sum + dollars, 0);
  console.log('| Item | Per event | $ per million events |\n|---|---|---:|');
  for (const [item, per, dollars] of rows)
    console.log(`| ${item} | ${per} | ${(dollars * 1e6).toFixed(3)} |`);
  console.log(`| **${totalLabel}** | | **${(total * 1e6).toFixed(2)}** |`);
  return total;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const fanout = fanoutRows(1);
  const fanoutTotal = fanout.reduce((sum, [, , dollars]) => sum + dollars, 0);
  const summary: string[] = [];
  for (const batchSize of BATCH_SIZES) {
    const { rows, notes, httpApiOnly } = await costTable(batchSize);
    console.log(`\n### Worker batches of ${batchSize}\n`);
    const total = printTable(rows, 'Total');
    for (const note of notes) console.log(`\n${note}`);
    const dollars = (value: number) => (value * 1e6).toFixed(2);
    summary.push(
      `| ${batchSize} | ${dollars(total)} | ${dollars(total - httpApiOnly)} | ${dollars(total + fanoutTotal)} |`,
    );
  }
  console.log('\nWith subscriptions (every event published and delivered to one URL subscription), added:\n');
  printTable(fanout, 'Added with subscriptions');
  console.log('\n### $ per million events by worker batch size\n');
  console.log('| Batch size | Total | On the function URL (ingestFunctionUrl=true) | With subscriptions |');
  console.log('|---:|---:|---:|---:|');
  for (const line of summary) console.log(line);
  printReconcileCosts();
}
