import { randomUUID } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { bookkeepingFilter, DEFAULT_BOOKKEEPING_FIELDS } from '../../lib/bus/entry.js';
import { createPublishFilter, publishDetailTypes } from '../../lib/bus/publish-filter.js';
import type { RowEvent, WebhookStateEvent } from '../../lib/events/index.js';
import { type DeliveryEvent, validEvent } from '../../lib/events/index.js';
import type { Hooks } from '../../lib/hooks.js';
import { routeEvent } from '../../lib/ingest/routing.js';
import type { OutboundMessage } from '../../lib/queue/port.js';
import {
  createRowWorker,
  type Publication,
  type RowWorkerDeps,
  type SqsBatchHandler,
} from '../../lib/workers/index.js';
import {
  buildSampleBody,
  dotNetTimestamp,
  type SampleEventName,
  type SampleOptions,
} from '../../tools/samples.js';
import { FakePublisher } from './bus.js';

/** A Logger that prints nothing and a Metrics that publishes nothing (spy on them to assert). */
export function quietObservability(): { logger: Logger; metrics: Metrics } {
  const logger = new Logger({ logLevel: 'SILENT', serviceName: 'test' });
  const previous = process.env.POWERTOOLS_METRICS_DISABLED;
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  const metrics = new Metrics({ namespace: 'CrmWebhookReceiver', serviceName: 'test' });
  if (previous === undefined) delete process.env.POWERTOOLS_METRICS_DISABLED;
  else process.env.POWERTOOLS_METRICS_DISABLED = previous;
  return { logger, metrics };
}

/** `base` plus `seconds` as the sender writes a Timestamp (7 fractional digits). */
export function at(seconds: number, base = Date.UTC(2025, 4, 14, 12, 0, 0)): string {
  return dotNetTimestamp(new Date(base + Math.round(seconds * 1000)));
}

/** A typed, validated event built from the realistic samples. */
export function rowEvent(
  name: Exclude<SampleEventName, `webhook.${string}`>,
  options: SampleOptions = {},
): RowEvent {
  return validSample(buildSampleBody(name, options)) as RowEvent;
}

export function stateEvent(
  name: `webhook.${'started' | 'stopped' | 'errors'}`,
  options: SampleOptions = {},
): WebhookStateEvent {
  return validSample(buildSampleBody(name, options)) as WebhookStateEvent;
}

function validSample(body: Record<string, unknown>): DeliveryEvent {
  const event = validEvent(body);
  if (event === undefined) throw new Error(`the sample ${String(body.Event)} is not valid`);
  return event;
}

/** An SQS record as the ingest would have queued `body` (group and dedup ids from the routing). */
export function sqsRecord(
  body: Record<string, unknown> | RowEvent | WebhookStateEvent,
  options: { base64?: boolean; raw?: string; messageId?: string; receiveCount?: number } = {},
): SQSRecord {
  const text = options.raw ?? JSON.stringify(body);
  const event = validEvent(body);
  const route =
    event !== undefined ? routeEvent(event) : { groupId: 'parked', deduplicationId: randomUUID() };
  const attribute = (value: string) => ({
    stringValue: value,
    dataType: 'String',
    stringListValues: [],
    binaryListValues: [],
  });
  return {
    messageId: options.messageId ?? randomUUID(),
    receiptHandle: randomUUID(),
    body: options.base64 ? Buffer.from(text).toString('base64') : text,
    attributes: {
      ApproximateReceiveCount: String(options.receiveCount ?? 1),
      SentTimestamp: String(Date.now()),
      SenderId: 'ingest',
      ApproximateFirstReceiveTimestamp: String(Date.now()),
      MessageGroupId: route.groupId,
      MessageDeduplicationId: route.deduplicationId,
    },
    messageAttributes: {
      event: attribute(String((body as { Event?: unknown }).Event)),
      eventId: attribute(String((body as { EventId?: unknown }).EventId)),
      signatureVerified: attribute('true'),
      receivedAt: attribute(new Date().toISOString()),
      ...(options.base64 && { bodyEncoding: attribute('base64') }),
    },
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:test.fifo',
    awsRegion: 'us-east-1',
  };
}

/** The SQS record of a message the receiver sends (a reconcile's snapshot), its body exactly as written. */
export function sqsRecordOf(message: OutboundMessage): SQSRecord {
  const raw = String(message.body);
  return sqsRecord(JSON.parse(raw), { raw });
}

export function sqsEvent(records: SQSRecord[]): SQSEvent {
  return { Records: records };
}

export const lambdaContext = {
  functionName: 'worker',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:worker',
  memoryLimitInMB: '256',
  awsRequestId: 'req-1',
  logGroupName: '/aws/lambda/worker',
  logStreamName: 'stream',
  callbackWaitsForEmptyEventLoop: false,
  getRemainingTimeInMillis: () => 30_000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
} as Context;

/** `record` as SQS delivers it again after a failed attempt: same message, one more receive. */
export function redelivered(record: SQSRecord): SQSRecord {
  const count = Number(record.attributes.ApproximateReceiveCount) + 1;
  return { ...record, attributes: { ...record.attributes, ApproximateReceiveCount: String(count) } };
}

/** A row worker's deps on `store`: `hooks` (default none), no associate's changes ignored, quiet logs. */
export function rowWorkerDeps(store: RowWorkerDeps['store'], hooks: Hooks = {}): RowWorkerDeps {
  return { store, hooks, ignoreAssociateIds: new Set(), ...quietObservability() };
}

/** The contact worker on `store`, with no hooks and quiet logs. */
export function contactWorker(store: RowWorkerDeps['store'], hooks: Hooks = {}): SqsBatchHandler {
  return createRowWorker({ ...rowWorkerDeps(store, hooks), entity: 'contact' });
}

/**
 * The contact worker on `store` publishing to an in-memory bus: the bus, the worker and the
 * publication they share (bookkeeping fields by default those of DEFAULT_BOOKKEEPING_FIELDS).
 */
export function publishingContactWorker(
  store: RowWorkerDeps['store'],
  options: {
    publishEchoes?: boolean;
    bookkeeping?: readonly string[];
    ignoreAssociateIds?: number[];
    /** The subscriptions' patterns, as PUBLISH_DETAIL_TYPES gives them; default every change is published. */
    patterns?: Record<string, unknown>[];
  } = {},
): { bus: FakePublisher; worker: SqsBatchHandler; publication: Publication } {
  const bus = new FakePublisher();
  const publication: Publication = {
    publisher: bus,
    publishEchoes: options.publishEchoes ?? false,
    isBookkeeping: bookkeepingFilter(options.bookkeeping ?? DEFAULT_BOOKKEEPING_FIELDS),
    matches: createPublishFilter(
      publishDetailTypes(options.patterns ?? [], undefined)
        .split(',')
        .filter(Boolean),
    ),
  };
  const worker = createRowWorker({
    ...rowWorkerDeps(store),
    entity: 'contact',
    ignoreAssociateIds: new Set(options.ignoreAssociateIds),
    publication,
  });
  return { bus, worker, publication };
}
