import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSMessageAttributes, SQSRecord } from 'aws-lambda';
import { createLambdaContext } from './lambda-context.js';

export type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | undefined>;

export interface EventSourceMappingOptions {
  client: SQSClient;
  functionName: string;
  queueUrl: string;
  queueArn: string;
  region: string;
  handler: SqsHandler;
  /** Records per invocation, 1..10 (Lambda's default for SQS is 10). */
  batchSize?: number;
  /** Invocations in flight at once; FIFO group locking in the queue keeps each row in order. */
  concurrency?: number;
  /** Long-poll wait per ReceiveMessage, seconds. */
  waitTimeSeconds?: number;
  /** The function's timeout (serverless.yml), for `context.getRemainingTimeInMillis()`. */
  timeoutMs?: number;
  onError?: (error: unknown) => void;
}

export interface EventSourceMappingStats {
  batches: number;
  records: number;
  succeeded: number;
  failed: number;
}

export interface EventSourceMapping {
  readonly stats: EventSourceMappingStats;
  /** Number of batches being handled right now. */
  readonly inFlight: number;
  /** Stops polling, aborts the batches in flight (their contexts' `abortSignal`), waits for them to finish and their successes to be deleted. */
  stop(): Promise<void>;
}

/**
 * What Lambda's SQS event source mapping does, on one machine: long-poll the queue, invoke the handler
 * with up to `batchSize` records, delete the records it did not report in `batchItemFailures`, and
 * leave the failures to the visibility timeout and the queue's redrive policy. A handler that throws,
 * or reports an item identifier that is not in the batch, fails the whole batch.
 */
export function startEventSourceMapping(options: EventSourceMappingOptions): EventSourceMapping {
  const batchSize = options.batchSize ?? 10;
  const concurrency = options.concurrency ?? 1;
  const stats: EventSourceMappingStats = { batches: 0, records: 0, succeeded: 0, failed: 0 };
  const abort = new AbortController();
  let inFlight = 0;
  let running = true;

  const loop = async () => {
    while (running) {
      let messages: Message[];
      try {
        const answer = await options.client.send(
          new ReceiveMessageCommand({
            QueueUrl: options.queueUrl,
            MaxNumberOfMessages: batchSize,
            WaitTimeSeconds: options.waitTimeSeconds ?? 20,
            AttributeNames: ['All'],
            MessageSystemAttributeNames: ['All'],
            MessageAttributeNames: ['All'],
          }),
          { abortSignal: abort.signal },
        );
        messages = answer.Messages ?? [];
      } catch (error) {
        if (!running) return;
        options.onError?.(error);
        await new Promise((resolve) => setTimeout(resolve, 250));
        continue;
      }
      if (messages.length === 0) continue;
      inFlight++;
      try {
        await invoke(messages);
      } finally {
        inFlight--;
      }
    }
  };

  const invoke = async (messages: Message[]) => {
    const records = messages.map((message) => toSqsRecord(message, options.queueArn, options.region));
    stats.batches++;
    stats.records += records.length;
    let failedIds: Set<string>;
    try {
      const context = createLambdaContext({
        functionName: options.functionName,
        timeoutMs: options.timeoutMs ?? 30_000,
        region: options.region,
        // Stopping aborts the handler's own waits too (a CRM call): it ends, its batch is settled.
        signal: abort.signal,
      });
      const response = await options.handler({ Records: records }, context);
      failedIds = new Set((response?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
      const known = new Set(records.map((record) => record.messageId));
      if ([...failedIds].some((id) => !known.has(id))) failedIds = known;
    } catch (error) {
      options.onError?.(error);
      failedIds = new Set(records.map((record) => record.messageId));
    }
    const succeeded = records.filter((record) => !failedIds.has(record.messageId));
    stats.failed += records.length - succeeded.length;
    if (succeeded.length === 0) return;
    try {
      const answer = await options.client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: options.queueUrl,
          Entries: succeeded.map((record, i) => ({ Id: String(i), ReceiptHandle: record.receiptHandle })),
        }),
      );
      stats.succeeded += succeeded.length - (answer.Failed?.length ?? 0);
      if (answer.Failed && answer.Failed.length > 0) {
        options.onError?.(new Error(`DeleteMessageBatch failed for ${answer.Failed.length} records`));
      }
    } catch (error) {
      options.onError?.(error);
    }
  };

  const loops = Array.from({ length: concurrency }, () => loop());

  return {
    stats,
    get inFlight() {
      return inFlight;
    },
    async stop() {
      running = false;
      abort.abort();
      await Promise.all(loops);
    },
  };
}

/** A received message as the record Lambda passes to the handler. */
export function toSqsRecord(message: Message, queueArn: string, region: string): SQSRecord {
  const messageAttributes: SQSMessageAttributes = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    messageAttributes[name] = {
      ...(value.StringValue === undefined ? {} : { stringValue: value.StringValue }),
      ...(value.BinaryValue === undefined
        ? {}
        : { binaryValue: Buffer.from(value.BinaryValue).toString('base64') }),
      stringListValues: value.StringListValues ?? [],
      binaryListValues: (value.BinaryListValues ?? []).map((bytes) => Buffer.from(bytes).toString('base64')),
      dataType: value.DataType ?? 'String',
    };
  }
  const attributes = message.Attributes ?? {};
  const record: SQSRecord = {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? '',
      SenderId: attributes.SenderId ?? '',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? '',
      ...pick(attributes, [
        'SequenceNumber',
        'MessageGroupId',
        'MessageDeduplicationId',
        'AWSTraceHeader',
        'DeadLetterQueueSourceArn',
      ]),
    },
    messageAttributes,
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: region,
  };
  if (message.MD5OfMessageAttributes) record.md5OfMessageAttributes = message.MD5OfMessageAttributes;
  return record;
}

function pick(source: Record<string, string>, names: readonly string[]): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of names) {
    const value = source[name];
    if (value !== undefined && value !== '') picked[name] = value;
  }
  return picked;
}
