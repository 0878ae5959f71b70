import { Readable } from 'node:stream';
import {
  ConditionalCheckFailedException,
  ProvisionedThroughputExceededException,
} from '@aws-sdk/client-dynamodb';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  type Message,
  ReceiveMessageCommand,
  SQSClient,
  type SQSClientConfig,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, SQSRecord } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadDefinitions, QUEUE_ENV_VARS } from '../../infra/definitions.js';
import type { RowEvent } from '../../lib/events/index.js';
import { createDynamoStore, rowKey } from '../../lib/store/index.js';
import type { Store } from '../../lib/store/types.js';
import { createRowWorker, type SqsBatchHandler } from '../../lib/workers/index.js';
import { ensureQueues, type LocalQueue } from '../../local/emulators/resources.js';
import { type SqsEmulator, startSqsEmulator } from '../../local/emulators/sqs-emulator.js';
import { LOCAL_CREDENTIALS } from '../../local/http/port-guard.js';
import { toSqsRecord } from '../../local/lambda/event-source-mapping.js';
import {
  buildSampleBody,
  buildSampleDelivery,
  type SampleEventName,
  sampleHttpApiEvent,
} from '../../tools/samples.js';
import { FAKE_AWS_ENV, type LocalDynamo, startDynalite } from '../support/dynamo.js';
import { startLocalQueues } from '../support/local-queues.js';
import { at, lambdaContext, rowEvent, rowWorkerDeps, sqsRecord } from '../support/workers.js';

/**
 * Faults injected below the code under test, never into it:
 * - SQS: every SQSClient gets a transport that, while a fault is switched on, answers SendMessage with a
 *   throttling or QueueDoesNotExist error. Otherwise it is the SDK's real HTTP handler. A peer that
 *   never answers is tested for real, with sockets and no mock: silent-sqs.test.ts.
 * - DynamoDB: a document client around dynalite whose `send` throws for chosen items.
 */
const sqsFault = vi.hoisted(() => ({
  mode: 'none' as 'none' | 'throttle' | 'gone',
  sendAttempts: 0,
}));

vi.mock('@aws-sdk/client-sqs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('@aws-sdk/client-sqs')>();
  type Handler = NonNullable<InstanceType<typeof actual.SQSClient>['config']['requestHandler']>;
  type Handle = (
    request: { headers: Record<string, string> },
    options?: { abortSignal?: AbortSignal },
  ) => Promise<unknown>;

  const errorResponse = (type: string, code?: string) => ({
    response: {
      statusCode: 400,
      reason: 'Bad Request',
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        ...(code !== undefined && { 'x-amzn-query-error': `${code};Sender` }),
      },
      body: Readable.from([
        Buffer.from(JSON.stringify({ __type: `com.amazonaws.sqs#${type}`, message: type })),
      ]),
    },
  });

  class FaultableSQSClient extends actual.SQSClient {
    constructor(config: SQSClientConfig = {}) {
      const real = new actual.SQSClient(config).config.requestHandler as unknown as Handler & {
        handle: Handle;
      };
      const handler = Object.create(real) as Handler & { handle: Handle };
      handler.handle = async (request, options) => {
        if (sqsFault.mode === 'none' || request.headers['x-amz-target'] !== 'AmazonSQS.SendMessage') {
          return real.handle(request, options);
        }
        sqsFault.sendAttempts++;
        if (sqsFault.mode === 'throttle') return errorResponse('RequestThrottled');
        return errorResponse('QueueDoesNotExist', 'AWS.SimpleQueueService.NonExistentQueue');
      };
      super({ ...config, requestHandler: handler });
    }
  }
  return { ...actual, SQSClient: FaultableSQSClient };
});

type IngestHandler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;

const httpEvent = sampleHttpApiEvent;

const SECRET = 'faults-secret-3c9a';

/** functions/ingest.ts loaded afresh against `queueUrls` (the SQS endpoint from AWS_ENDPOINT_URL_SQS). */
async function loadIngest(queueUrls: Record<string, string>, endpoint?: string): Promise<IngestHandler> {
  for (const [name, value] of Object.entries({ ...FAKE_AWS_ENV, ...queueUrls })) vi.stubEnv(name, value);
  if (endpoint !== undefined) {
    vi.stubEnv('AWS_ENDPOINT_URL_SQS', endpoint);
    // The emulator answers only requests signed with the local runtime's access key id.
    vi.stubEnv('AWS_ACCESS_KEY_ID', LOCAL_CREDENTIALS.accessKeyId);
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', LOCAL_CREDENTIALS.secretAccessKey);
  }
  vi.stubEnv('WEBHOOK_SECRET', SECRET);
  vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'SILENT');
  vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'true');
  vi.resetModules();
  return (await import('../../functions/ingest.js')).handler;
}

afterEach(() => {
  sqsFault.mode = 'none';
  sqsFault.sendAttempts = 0;
  vi.useRealTimers();
});

describe('SQS faults during ingest', () => {
  const urls = Object.fromEntries(
    Object.values(QUEUE_ENV_VARS).map((name) => [name, `https://sqs.us-east-1.amazonaws.com/1/${name}.fifo`]),
  );

  it.each([
    ['throttling', 'throttle', 2],
    ['a queue that is gone', 'gone', 1],
  ] as const)(
    '%s: 503 with Retry-After within the 3 s budget, on a virtual clock with worst-case backoff',
    async (_label, mode, attempts) => {
      const handler = await loadIngest(urls);
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
      vi.spyOn(Math, 'random').mockReturnValue(0.999_999); // the longest backoff the SDK can choose
      sqsFault.mode = mode;
      const delivery = buildSampleDelivery(buildSampleBody('contact.changed'), { secret: SECRET });

      const started = Date.now();
      let result: APIGatewayProxyStructuredResultV2 | undefined;
      const pending = handler(httpEvent(delivery)).then((value) => {
        result = value;
      });
      // Virtual time moves only when the SDK waits on a timer (backoff, timeouts), by exactly that wait.
      // The sender's own deadline is a timer from the start: while it is the only one, the SDK is still
      // working (promises, I/O), so time moves only once nothing else happened for many turns.
      let idleTurns = 0;
      while (result === undefined && Date.now() - started < 60_000) {
        await new Promise((resolve) => setImmediate(resolve));
        const timers = vi.getTimerCount();
        idleTurns = timers === 1 ? idleTurns + 1 : 0;
        if (timers > 1 || idleTurns > 1_000) await vi.advanceTimersToNextTimerAsync();
      }
      await pending;
      const elapsed = Date.now() - started;

      expect(result?.statusCode).toBe(503);
      expect(result?.headers?.['retry-after']).toBe('1');
      expect(sqsFault.sendAttempts).toBe(attempts);
      expect(elapsed).toBeLessThan(3000);
    },
  );

  describe('on local-aws-sqs', () => {
    let emulator: SqsEmulator;
    let client: SQSClient;
    let queues: LocalQueue[];

    beforeAll(async () => {
      ({ emulator, client, queues } = await startLocalQueues({ stage: 'faults', visibilityTimeout: 1 }));
    });
    afterAll(async () => {
      client.destroy();
      await emulator.close();
    });

    it('the sender’s retries after recovery are accepted, and the event is queued exactly once', async () => {
      const handler = await loadIngest(
        Object.fromEntries(queues.map((queue) => [queue.envVar, queue.url])),
        emulator.endpoint,
      );
      const contact = queues.find((queue) => queue.key === 'contact')!;
      const delivery = buildSampleDelivery(buildSampleBody('contact.changed', { context: 'CustRetry' }), {
        secret: SECRET,
      });

      sqsFault.mode = 'throttle';
      const throttled = await handler(httpEvent(delivery));
      sqsFault.mode = 'none';
      await client.send(new DeleteQueueCommand({ QueueUrl: contact.url }));
      const gone = await handler(httpEvent(delivery));
      await ensureQueues(client, loadDefinitions({ stage: 'faults' }).queues, { visibilityTimeout: 1 });
      // Recovered: the sender's next attempt, then one more (say its 200 was lost on the way back).
      const retried = await handler(httpEvent(delivery));
      const again = await handler(httpEvent(delivery));

      expect([throttled, gone, retried, again].map((r) => r.statusCode)).toEqual([503, 503, 200, 200]);
      const messages = await receiveAll(client, contact.url);
      expect(messages.map((m) => m.Body)).toEqual([delivery.body]);
    });
  });
});

async function receiveAll(client: SQSClient, url: string): Promise<Message[]> {
  const all: Message[] = [];
  for (;;) {
    const { Messages = [] } = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: 30,
        MessageAttributeNames: ['All'],
        AttributeNames: ['All'],
      }),
    );
    if (Messages.length === 0) return all;
    all.push(...Messages);
  }
}

/** A fault: which DynamoDB calls fail, with what, and for how many more calls (Infinity: until switched off). */
interface DynamoFault {
  command: 'GetCommand' | 'PutCommand';
  table: string;
  matches: (input: Record<string, unknown>) => boolean;
  error: () => Error;
  remaining: number;
}

/** The document client the store gets: dynalite behind it, and `fault` applied to every call. */
function faultyClient(
  doc: DynamoDBDocumentClient,
  state: { fault?: DynamoFault | undefined },
): DynamoDBDocumentClient {
  const wrapper = Object.create(doc) as DynamoDBDocumentClient;
  const send = doc.send.bind(doc) as (command: unknown, ...rest: unknown[]) => Promise<unknown>;
  wrapper.send = (async (
    command: { constructor: { name: string }; input: Record<string, unknown> },
    ...rest: unknown[]
  ) => {
    const fault = state.fault;
    if (
      fault !== undefined &&
      fault.remaining > 0 &&
      command.constructor.name === fault.command &&
      command.input.TableName === fault.table &&
      fault.matches(command.input)
    ) {
      fault.remaining--;
      throw fault.error();
    }
    return send(command, ...rest);
  }) as DynamoDBDocumentClient['send'];
  return wrapper;
}

const throttled = () =>
  new ProvisionedThroughputExceededException({
    message: 'Rate of requests exceeds the allowed throughput',
    $metadata: {},
  });
const timedOut = () => Object.assign(new Error('socket timed out'), { name: 'TimeoutError' });
const conditionFailed = () =>
  new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });

describe('DynamoDB faults during a worker batch (dynalite)', () => {
  let dynamo: LocalDynamo;
  beforeAll(async () => {
    dynamo = await startDynalite();
  });
  afterAll(() => dynamo.close());

  async function freshStores(state: { fault?: DynamoFault | undefined }) {
    const tables = await dynamo.createTables();
    const store = createDynamoStore({ client: faultyClient(dynamo.doc, state), tables, retentionDays: 30 });
    const reference = createDynamoStore({
      client: dynamo.doc,
      tables: await dynamo.createTables(),
      retentionDays: 30,
    });
    return { tables, store, reference };
  }

  const worker = (store: Store, maxAttempts?: number): SqsBatchHandler =>
    createRowWorker({
      entity: 'contact',
      ...rowWorkerDeps(store),
      ...(maxAttempts !== undefined && { maxAttempts }),
    });

  /** Three rows, three events each, interleaved as SQS hands out a batch of several groups. */
  function streams(context: string): RowEvent[][] {
    const names: Array<Exclude<SampleEventName, `webhook.${string}`>> = [
      'contact.created',
      'contact.changed',
      'contact.changed',
    ];
    return [1, 2, 3].map((primaryKey) =>
      names.map((name, i) =>
        rowEvent(name, { context, primaryKey, timestamp: at(primaryKey * 10 + i, Date.now()) }),
      ),
    );
  }

  it.each([
    ['throttling on the history write', 'PutCommand', 'events', throttled],
    ['timeouts reading the row', 'GetCommand', 'rows', timedOut],
    ['conditional failures on every row write (contention)', 'PutCommand', 'rows', conditionFailed],
  ] as const)(
    '%s: only that row’s records fail, its group waits, everything converges after recovery',
    async (_label, command, table, error) => {
      const state: { fault?: DynamoFault | undefined } = {};
      const { tables, store, reference } = await freshStores(state);
      const context = `CustFault${table}${command}`;
      const events = streams(context);
      const records = new Map(events.flat().map((event) => [event.EventId, sqsRecord(event)]));
      const batch = [0, 1, 2].flatMap((i) => events.map((row) => records.get(row[i]!.EventId)!));
      const faultyKey = rowKey(context, 'contact', 2);
      state.fault = {
        command,
        table: tables[table],
        matches: (input) => JSON.stringify(input.Key ?? input.Item ?? {}).includes(JSON.stringify(faultyKey)),
        error,
        remaining: Number.POSITIVE_INFINITY,
      };
      for (const stream of events)
        await worker(reference)({ Records: stream.map((e) => sqsRecord(e)) }, lambdaContext);

      const during = await worker(store)({ Records: batch }, lambdaContext);

      const row2 = events[1]!.map((event) => records.get(event.EventId)!.messageId);
      expect(during.batchItemFailures.map((failure) => failure.itemIdentifier)).toEqual(row2);
      for (const primaryKey of [1, 3]) {
        expect(await store.getRow(context, 'contact', primaryKey)).toEqual(
          await reference.getRow(context, 'contact', primaryKey),
        );
      }
      // The group waited: nothing after its failed record was applied.
      state.fault = undefined;
      expect(await store.getRow(context, 'contact', 2)).toBeUndefined();
      expect((await store.listRowEvents(context, 'contact', 2)).length).toBeLessThanOrEqual(1);

      // Recovery: SQS hands the failed records out again, in group order; a full re-delivery changes nothing.
      const failed = batch.filter((record) => row2.includes(record.messageId));
      expect(await worker(store)({ Records: failed }, lambdaContext)).toEqual({ batchItemFailures: [] });
      expect(await worker(store)({ Records: batch }, lambdaContext)).toEqual({ batchItemFailures: [] });
      for (const primaryKey of [1, 2, 3]) {
        expect(await store.getRow(context, 'contact', primaryKey)).toEqual(
          await reference.getRow(context, 'contact', primaryKey),
        );
        expect((await store.listRowEvents(context, 'contact', primaryKey)).map((e) => e.eventId)).toEqual(
          (await reference.listRowEvents(context, 'contact', primaryKey)).map((e) => e.eventId),
        );
      }
    },
  );

  it('a transient fault (one throttled write) fails the record once; the redelivery succeeds', async () => {
    const state: { fault?: DynamoFault | undefined } = {};
    const { tables, store, reference } = await freshStores(state);
    const event = rowEvent('contact.created', {
      context: 'CustBlip',
      primaryKey: 1,
      timestamp: at(1, Date.now()),
    });
    state.fault = {
      command: 'PutCommand',
      table: tables.rows,
      matches: () => true,
      error: throttled,
      remaining: 1,
    };
    await worker(reference)({ Records: [sqsRecord(event)] }, lambdaContext);
    const record = sqsRecord(event);

    const first = await worker(store)({ Records: [record] }, lambdaContext);
    const second = await worker(store)({ Records: [record] }, lambdaContext);

    expect(first.batchItemFailures).toEqual([{ itemIdentifier: record.messageId }]);
    expect(second.batchItemFailures).toEqual([]);
    expect(await store.getRow('CustBlip', 'contact', 1)).toEqual(
      await reference.getRow('CustBlip', 'contact', 1),
    );
  });

  describe('a record that never succeeds, on local-aws-sqs with the redrive policy of infra/resources.yml', () => {
    let emulator: SqsEmulator;
    let client: SQSClient;
    let contact: LocalQueue;

    beforeAll(async () => {
      emulator = await startSqsEmulator();
      client = new SQSClient({
        endpoint: emulator.endpoint,
        region: 'us-east-1',
        credentials: { ...LOCAL_CREDENTIALS },
      });
      const queues = await ensureQueues(client, loadDefinitions({ stage: 'faultdlq' }).queues, {
        visibilityTimeout: 1,
      });
      contact = queues.find((queue) => queue.key === 'contact')!;
    });
    afterAll(async () => {
      client.destroy();
      await emulator.close();
    });

    async function inFlight(): Promise<boolean> {
      const { Attributes = {} } = await client.send(
        new GetQueueAttributesCommand({
          QueueUrl: contact.url,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      );
      return (
        Number(Attributes.ApproximateNumberOfMessages) +
          Number(Attributes.ApproximateNumberOfMessagesNotVisible) >
        0
      );
    }

    /** The event source mapping in miniature: receive, invoke, delete successes, release failures at once. */
    async function drain(handler: SqsBatchHandler): Promise<number> {
      let failures = 0;
      for (let round = 0; round < 1000; round++) {
        const { Messages = [] } = await client.send(
          new ReceiveMessageCommand({
            QueueUrl: contact.url,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 0,
            AttributeNames: ['All'],
            MessageAttributeNames: ['All'],
          }),
        );
        if (Messages.length === 0) {
          // Drained only when nothing is in flight either: the emulator moves a message to its DLQ (or makes
          // it visible again) from a timer, so an empty receive can come before a released message is back.
          if (await inFlight()) {
            await new Promise((resolve) => setTimeout(resolve, 20));
            continue;
          }
          return failures;
        }
        const { batchItemFailures } = await handler({ Records: Messages.map(toRecord) }, lambdaContext);
        const failed = new Set(batchItemFailures.map((failure) => failure.itemIdentifier));
        failures += failed.size;
        for (const message of Messages) {
          const ReceiptHandle = message.ReceiptHandle!;
          if (failed.has(message.MessageId!)) {
            await client.send(
              new ChangeMessageVisibilityCommand({
                QueueUrl: contact.url,
                ReceiptHandle,
                VisibilityTimeout: 0,
              }),
            );
          } else await client.send(new DeleteMessageCommand({ QueueUrl: contact.url, ReceiptHandle }));
        }
      }
      throw new Error('the queue never drained');
    }

    it('ends in the DLQ with the rest of its group behind it; other rows go on; a redrive after the fix converges', async () => {
      const state: { fault?: DynamoFault | undefined } = {};
      const { tables, store, reference } = await freshStores(state);
      const [p1, p2] = [
        rowEvent('contact.created', { context: 'CustDlq', primaryKey: 7, timestamp: at(1, Date.now()) }),
        rowEvent('contact.changed', { context: 'CustDlq', primaryKey: 7, timestamp: at(2, Date.now()) }),
      ];
      const other = rowEvent('contact.created', {
        context: 'CustDlq',
        primaryKey: 8,
        timestamp: at(1, Date.now()),
      });
      const handler = await loadIngest(
        { ...Object.fromEntries(Object.values(QUEUE_ENV_VARS).map((n) => [n, contact.url])) },
        emulator.endpoint,
      );
      for (const event of [p1!, p2!, other]) {
        expect((await handler(httpEvent(buildSampleDelivery(event, { secret: SECRET })))).statusCode).toBe(
          200,
        );
      }
      for (const event of [p1!, p2!, other])
        await worker(reference)({ Records: [sqsRecord(event)] }, lambdaContext);
      // The cause: the history write of p1 is refused every time (say, an item the table cannot take).
      state.fault = {
        command: 'PutCommand',
        table: tables.events,
        matches: (input) => String((input.Item as { seq?: unknown } | undefined)?.seq).endsWith(p1!.EventId),
        error: throttled,
        remaining: Number.POSITIVE_INFINITY,
      };

      const failures = await drain(worker(store));

      expect(failures).toBeGreaterThanOrEqual(1);
      const dead = await receiveAll(client, contact.dlq.url);
      // p2 waited behind p1 in every batch (failed with it, as its group), so it was dead-lettered with it:
      // the order of the row is kept even in the DLQ.
      expect(dead.map((m) => JSON.parse(m.Body!).EventId)).toEqual([p1!.EventId, p2!.EventId]);
      expect(await store.getRow('CustDlq', 'contact', 7)).toBeUndefined();
      expect(await store.getRow('CustDlq', 'contact', 8)).toEqual(
        await reference.getRow('CustDlq', 'contact', 8),
      );
      // Release what receiveAll took from the DLQ, fix the cause, redrive with SQS's own move task.
      for (const message of dead) {
        await client.send(
          new ChangeMessageVisibilityCommand({
            QueueUrl: contact.dlq.url,
            ReceiptHandle: message.ReceiptHandle!,
            VisibilityTimeout: 0,
          }),
        );
      }
      state.fault = undefined;
      await client.send(
        new StartMessageMoveTaskCommand({ SourceArn: contact.dlq.arn, DestinationArn: contact.arn }),
      );
      await waitForMoveTask(client, contact.dlq.arn);

      expect(await drain(worker(store))).toBe(0);
      expect(await receiveAll(client, contact.dlq.url)).toEqual([]);
      expect(await store.getRow('CustDlq', 'contact', 7)).toEqual(
        await reference.getRow('CustDlq', 'contact', 7),
      );
    });
  });
});

/** Waits until SQS's last message move task from `sourceArn` has ended (no longer RUNNING). */
async function waitForMoveTask(client: SQSClient, sourceArn: string): Promise<void> {
  await vi.waitFor(
    async () => {
      const { Results = [] } = await client.send(
        new ListMessageMoveTasksCommand({ SourceArn: sourceArn, MaxResults: 1 }),
      );
      expect(Results[0]?.Status, 'the status of the message move task').not.toBe('RUNNING');
    },
    { timeout: 5_000, interval: 20 },
  );
}

/** What the Lambda SQS event source hands the function (the local runtime's own conversion). */
const toRecord = (message: Message): SQSRecord =>
  toSqsRecord(message, 'arn:aws:sqs:us-east-1:000000000000:contact.fifo', 'us-east-1');
