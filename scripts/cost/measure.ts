import { randomUUID } from 'node:crypto';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { loadAccessLogFormat } from '../../infra/serverless-file.js';
import {
  buildSampleBody,
  buildSampleDelivery,
  dotNetTimestamp,
  sampleHttpApiEvent,
} from '../../tools/samples.js';
import { accessLogLine, accessLogValues } from './log-lines.js';
import { recordDynamo } from './recording-dynamo.js';
import { LOG_SETUPS, PUBLISH_ENV, STAGE_ENV } from './stage.js';

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
    const ingest = await import(`../../functions/ingest.ts?${variant}`);
    const worker = await import(`../../functions/contact-worker.ts?${variant}`);

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
