import { setTimeout as sleep } from 'node:timers/promises';
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll } from 'vitest';
import { redrivePolicy } from '../../infra/definitions.js';
import type { CrmCredentials } from '../../lib/config/crm.js';
import { CRM_TABLES, type CrmLimits, createCrmClient, tenantEndpoints } from '../../lib/crm/index.js';
import { parseDeliveryEvent } from '../../lib/events/index.js';
import { routeEvent } from '../../lib/ingest/routing.js';
import type { RowEntity } from '../../lib/model/types.js';
import type { OutboundMessage } from '../../lib/queue/port.js';
import { createSnapshotSender } from '../../lib/queue/sqs-snapshots.js';
import { type ReconcileRequest, reconcileMessage } from '../../lib/reconcile/request.js';
import { createReconcileHandler } from '../../lib/reconcile/run/reconcile-handler.js';
import { createRecoveryStore, createStoredRows } from '../../lib/store/index.js';
import { createSenderClock } from '../../lib/store/sender-clock.js';
import type { Store } from '../../lib/store/types.js';
import { createEntitiesWorker, createRowWorker, type SqsBatchHandler } from '../../lib/workers/index.js';
import { toSqsRecord } from '../../local/lambda/event-source-mapping.js';
import type { RunningCrm } from '../../tools/crm/start.js';
import { startTarget } from '../crm/support.js';
import { recordingFetch, simulator } from '../crm-client/support.js';
import { FakePublisher } from '../support/bus.js';
import { type LocalDynamo, startDynamoStore } from '../support/dynamo.js';
import { type LocalQueues, startLocalQueues } from '../support/local-queues.js';
import { startSkewedCrm } from '../support/skewed-crm.js';
import { lambdaContext, quietObservability } from '../support/workers.js';

const ROW_QUEUES = ['contact', 'activity', 'entities'] as const;

/** The receiver's side a reconcile needs, real: dynalite with the tables, the SQS emulator with the queues. */
export interface Receiver {
  dynamo: LocalDynamo;
  queues: LocalQueues;
  tables: { rows: string; events: string; webhooks: string };
  store: Store;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const { dynamo, tables, store } = await startDynamoStore();
  const queues = await startLocalQueues({ stage: `r${Date.now() % 100000}` });
  return {
    dynamo,
    queues,
    tables,
    store,
    async close() {
      await queues.close();
      await dynamo.close();
    },
  };
}

/** Deliveries the CRM sent (its raw bodies), queued to the row queues as the ingest queues them (its route). */
export async function deliverReceived(
  receiver: Receiver,
  received: ReadonlyArray<{ raw: string; body: unknown }>,
): Promise<void> {
  const messages = received.map((delivery): OutboundMessage => {
    const parsed = parseDeliveryEvent(delivery.body);
    if (!parsed.ok) throw new Error(`the simulator delivered an invalid ${delivery.raw}`);
    const event = parsed.event;
    const attributes = { event: event.Event, eventId: event.EventId, receivedAt: new Date().toISOString() };
    return { ...routeEvent(event), body: delivery.raw, attributes };
  });
  await createSnapshotSender({ client: receiver.queues.client, queueUrls: receiver.queues.queueUrls })(
    messages,
  );
}

/** A receiver and the CRM simulator for a file's tests: started before them, stopped after. */
export function receiverAndSimulator(): { receiver: Receiver; crm: RunningCrm } {
  const world = {} as { receiver: Receiver; crm: RunningCrm };
  let stopSimulator: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    world.receiver = await startReceiver();
    const started = await simulator();
    world.crm = started.crm;
    stopSimulator = started.stop;
  });
  afterAll(async () => {
    await stopSimulator?.();
    await world.receiver?.close();
  });
  return world;
}

/**
 * The receiver, the simulator, a webhook target that records its deliveries, and a server of the
 * test's own in front of the simulator (`proxy.apiUrl`, its Date and archive answers as its options say).
 */
export async function startProxiedCrm() {
  const receiver = await startReceiver();
  const crm = await simulator();
  const target = await startTarget();
  const proxy = await startSkewedCrm(new URL(crm.crm.apiUrl('x')).origin);
  return {
    receiver,
    crm: crm.crm,
    target,
    proxy,
    async close() {
      await proxy.close();
      await target.close();
      await crm.stop();
      await receiver.close();
    },
  };
}

export interface RigOptions {
  limits?: Partial<CrmLimits>;
  credentials?: CrmCredentials;
  /** Pages one invocation may start (the time budget, made tiny); unbounded when absent. */
  pagesPerInvocation?: number;
  /** The reconcile queue's maxReceiveCount (default 5) and visibility timeout (default 30 s). */
  maxReceives?: number;
  visibilitySeconds?: number;
  /** Failed invocations are left to the visibility timeout (and the DLQ) instead of failing the test. */
  expectFailures?: boolean;
  /** The CRM client's time budget (each wait for a retry must fit in it, else CrmRetryLater). */
  clientBudgetMs?: number;
  /** Wraps the real fetch (to answer a fault the simulator cannot show); every request is still recorded. */
  wrapFetch?: (real: typeof fetch) => typeof fetch;
  /** Where runs naming a webhook are recorded; default: the receiver's webhooks table, as functions/reconcile.ts. */
  recovery?: Parameters<typeof createReconcileHandler>[0]['recovery'];
  /** ENTITIES: whether the receiver stores an entity's rows (default every entity). */
  stores?: (entity: string) => boolean;
  /** A run's bounds (default RECONCILE_MAX_RUN_HOURS and RECONCILE_MAX_INVOCATIONS's). */
  bounds?: Parameters<typeof createReconcileHandler>[0]['bounds'];
  /** The CRM's API base with `{ContextIdentifier}` (a server in front of the simulator); default the simulator's. */
  apiUrl?: string;
  /** Missing rows a count keeps to delete without a second listing (default KEPT_MISSING). */
  keepMissing?: number;
}

/**
 * One reconcile function as functions/reconcile.ts composes it, against `crm` and `receiver`: its own
 * reconcile FIFO queue, the real CRM client (every HTTP request recorded), the snapshot sender, the
 * stored rows' index, the real workers (on an in-memory bus) draining the rows' queues, and a test clock.
 */
export async function reconcileRig(crm: RunningCrm, receiver: Receiver, options: RigOptions = {}) {
  const { client } = receiver.queues;
  const name = `reconcile-${Math.random().toString(36).slice(2, 10)}`;
  const maxReceives = options.maxReceives ?? 5;
  const visibilitySeconds = options.visibilitySeconds ?? 30;
  const fifo = { FifoQueue: 'true', ContentBasedDeduplication: 'false' };
  const dlqUrl = (
    await client.send(new CreateQueueCommand({ QueueName: `${name}-dlq.fifo`, Attributes: fifo }))
  ).QueueUrl!;
  const reconcileUrl = (
    await client.send(
      new CreateQueueCommand({
        QueueName: `${name}.fifo`,
        Attributes: {
          ...fifo,
          VisibilityTimeout: String(visibilitySeconds),
          RedrivePolicy: redrivePolicy(await arnOf(client, dlqUrl), maxReceives),
        },
      }),
    )
  ).QueueUrl!;
  const { fetch: recording, calls } = recordingFetch(options.wrapFetch ? options.wrapFetch(fetch) : fetch);
  const crmClient = createCrmClient({
    apiUrl: options.apiUrl ?? crm.apiUrl('{ContextIdentifier}'),
    credentials: { '*': options.credentials ?? { type: 'basic', user: 'crm', password: 'crm' } },
    limits: { perSecond: 50, inFlight: 4, ...options.limits },
    fetch: recording,
    ...(options.clientBudgetMs !== undefined && { timeLeftMs: () => options.clientBudgetMs! }),
    random: () => 0.5,
    // As functions/reconcile.ts: a tenant that moved is called where its state says (a server of the
    // test's own in front of the simulator names itself there, test/support/skewed-crm.ts).
    ...tenantEndpoints(),
  });
  const { queueUrls } = receiver.queues;
  let offsetMs = 0;
  const now = () => new Date(Date.now() + offsetMs);
  const senderAheadMs = createSenderClock(receiver.dynamo.doc, receiver.tables.webhooks);
  const bus = new FakePublisher();
  const lifecycle = new FakePublisher();
  const observability = quietObservability();
  let pagesLeft = Number.POSITIVE_INFINITY;
  const results: string[] = [];
  const handler = createReconcileHandler({
    async runDeps() {
      pagesLeft = options.pagesPerInvocation ?? Number.POSITIVE_INFINITY;
      return {
        crm: crmClient,
        stored: createStoredRows({ client: receiver.dynamo.doc, table: receiver.tables.rows }),
        send: createSnapshotSender({ client, queueUrls }),
        senderAheadMs,
        stores: options.stores ?? (() => true),
        apiCalls: () => calls.length,
        timeLeftMs: () => (pagesLeft-- > 0 ? 60_000 : 0),
        now,
        warn: () => undefined,
        random: () => 0.5,
        ...(options.keepMissing !== undefined && { keepMissing: options.keepMissing }),
      };
    },
    async carryOn(request) {
      results.push('carry-on');
      await sendRequest(request);
    },
    async hide(receiptHandle, seconds) {
      results.push(`hide ${seconds}`);
      await client.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: reconcileUrl,
          ReceiptHandle: receiptHandle,
          VisibilityTimeout: seconds,
        }),
      );
    },
    publisher: lifecycle,
    maxReceives,
    ...(options.bounds && { bounds: options.bounds }),
    recovery: options.recovery ?? createRecoveryStore(receiver.dynamo.doc, receiver.tables.webhooks),
    ...observability,
    now,
  });
  const sendRequest = async (request: ReconcileRequest) => {
    const message = reconcileMessage(request);
    await client.send(
      new SendMessageCommand({
        QueueUrl: reconcileUrl,
        MessageBody: message.body,
        MessageGroupId: message.groupId,
        MessageDeduplicationId: message.deduplicationId,
      }),
    );
  };
  const receive = async (url: string, max: number): Promise<Message[]> =>
    (
      await client.send(
        new ReceiveMessageCommand({
          QueueUrl: url,
          MaxNumberOfMessages: max,
          WaitTimeSeconds: 0,
          AttributeNames: ['All'],
          MessageSystemAttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
      )
    ).Messages ?? [];

  const deps = { store: receiver.store, hooks: {}, ignoreAssociateIds: new Set<number>(), ...observability };
  const publication = { publisher: bus, publishEchoes: false, isBookkeeping: () => false };
  const workers: Record<(typeof ROW_QUEUES)[number], SqsBatchHandler> = {
    contact: createRowWorker({ ...deps, entity: 'contact', publication }),
    activity: createRowWorker({ ...deps, entity: 'activity', publication }),
    entities: createEntitiesWorker({ ...deps, publication }),
  };
  /** Every snapshot the workers were given, as `<entity>/<pk>` (to find one sent twice). */
  const applied: string[] = [];

  return {
    calls,
    bus,
    lifecycle,
    results,
    /** Moves the test clock (the handler's and the run's `now`) forward. */
    advance(ms: number) {
      offsetMs += ms;
    },
    now,
    applied,
    enqueue: sendRequest,
    /** The messages in the reconcile DLQ now. */
    dlq: () => receive(dlqUrl, 10),
    /**
     * Runs the reconcile queue until it is empty, as Lambda's event source mapping would (batch size 1,
     * a success deleted, a failure left to its visibility timeout). A message the handler hid until its
     * `notBefore` is made visible again once the clock is moved past it (and real time waited, up to
     * `realWaitCapMs`, for the simulator's own faults to end). Returns the invocations made.
     */
    async runReconciles(realWaitCapMs = 3_000, maxInvocations = 500): Promise<number> {
      let invocations = 0;
      for (let idle = 0; idle < 3; ) {
        const [message] = await receive(reconcileUrl, 1);
        if (message === undefined) {
          idle++;
          continue;
        }
        idle = 0;
        invocations++;
        if (invocations > maxInvocations)
          throw new Error(`the reconcile did not end within ${maxInvocations} invocations`);
        const record = toSqsRecord(message, 'arn:aws:sqs:us-east-1:000000000000:reconcile.fifo', 'us-east-1');
        const context = { ...lambdaContext, getRemainingTimeInMillis: () => 60_000 } as Context;
        const { batchItemFailures } = await handler({ Records: [record] }, context);
        if (batchItemFailures.length === 0) {
          await client.send(
            new DeleteMessageCommand({ QueueUrl: reconcileUrl, ReceiptHandle: message.ReceiptHandle }),
          );
          continue;
        }
        const hidden = results.at(-1)?.startsWith('hide') === true;
        if (!hidden && options.expectFailures) {
          await sleep(visibilitySeconds * 1000 + 200);
          continue;
        }
        if (!hidden) throw new Error(`the reconcile failed: ${results.at(-1) ?? ''}`);
        const seconds = Number(results.at(-1)!.split(' ')[1]);
        this.advance(seconds * 1000);
        if (seconds * 1000 <= realWaitCapMs) {
          await sleep(seconds * 1000 + 200); // visible again by itself
          continue;
        }
        await sleep(realWaitCapMs);
        await client.send(
          new ChangeMessageVisibilityCommand({
            QueueUrl: reconcileUrl,
            ReceiptHandle: message.ReceiptHandle,
            VisibilityTimeout: 0,
          }),
        );
      }
      return invocations;
    },
    /** Drains the rows' queues through the real workers until they are empty. */
    async drainWorkers(): Promise<number> {
      let records = 0;
      for (let idle = 0; idle < 2; ) {
        let got = 0;
        for (const key of ROW_QUEUES) {
          const queue = receiver.queues.queues.find((q) => q.key === key)!;
          const messages = await receive(queue.url, 10);
          if (messages.length === 0) continue;
          got += messages.length;
          const sqsRecords = messages.map((m) => toSqsRecord(m, queue.arn, 'us-east-1'));
          for (const r of sqsRecords) {
            const body = JSON.parse(r.body) as { Entity: string; PrimaryKey: number };
            applied.push(`${body.Entity}/${body.PrimaryKey}`);
          }
          const { batchItemFailures } = await workers[key]({ Records: sqsRecords }, lambdaContext);
          if (batchItemFailures.length > 0)
            throw new Error(`the ${key} worker failed ${batchItemFailures.length} records`);
          for (const m of messages)
            await client.send(
              new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: m.ReceiptHandle }),
            );
        }
        records += got;
        idle = got === 0 ? idle + 1 : 0;
      }
      return records;
    },
  };
}

/**
 * Registers a webhook of `context` in the CRM naming `entities`' created events: a run without
 * `entities` covers what the context's webhooks name. Its target refuses connections (nothing is
 * delivered): register it after the rows a test creates.
 */
export async function subscribe(crm: RunningCrm, context: string, entities: readonly string[]) {
  const events = entities.map((entity) => `${entity}.created`);
  await crm.core.register(context, { name: 'receiver', events, targetUrl: 'http://127.0.0.1:9/' });
}

/** A request for the reconcile queue. */
export function request(context: string, fields: Partial<ReconcileRequest> = {}): ReconcileRequest {
  return { context, reason: 'manual', requestedAt: new Date().toISOString(), ...fields };
}

/**
 * Every row of `context` in the CRM (of the entities reconciled) against the receiver's: the CRM's
 * values of the snapshot fields, and the stored row's FieldValues and status. Equal when converged.
 */
export async function compareRows(crm: RunningCrm, store: Store, context: string) {
  const data = crm.core.store.context(context);
  const crmSide: Record<string, unknown> = {};
  const storedSide: Record<string, unknown> = {};
  for (const [entity, table] of Object.entries(CRM_TABLES)) {
    for (const [id, row] of Object.entries(data.rows[table.table] ?? {})) {
      const fields = table.fields!;
      crmSide[`${entity}/${id}`] = {
        status: 'active',
        fieldValues: Object.fromEntries(fields.map((f) => [f, row[f] ?? null])),
      };
      const stored = await store.getRow(context, entity as RowEntity, Number(id));
      storedSide[`${entity}/${id}`] = stored && { status: stored.status, fieldValues: stored.fieldValues };
    }
  }
  return { crm: crmSide, stored: storedSide };
}

async function arnOf(client: SQSClient, QueueUrl: string): Promise<string> {
  const { Attributes } = await client.send(
    new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
  );
  return Attributes!.QueueArn!;
}
