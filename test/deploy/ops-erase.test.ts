import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { CreateQueueCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueOutputs, tableOutput } from '../../infra/definitions.js';
import type { Store } from '../../lib/store/types.js';
import { createEntitiesWorker } from '../../lib/workers/index.js';
import { type DashboardClients, main } from '../../scripts/ops.js';
import { buildSampleBody } from '../../tools/samples.js';
import { type LocalDynamo, startDynamoStore, type TableNames } from '../support/dynamo.js';
import { type ParkedQueues, startParkedQueues } from '../support/parked.js';
import { describedStack, opsClients } from '../support/stack-outputs.js';
import { at, lambdaContext, rowEvent, rowWorkerDeps, sqsEvent, sqsRecord } from '../support/workers.js';

/** `npm run ops -- erase` on a "stage" whose outputs name dynalite's tables and the SQS emulator's queues. */
let dynamo: LocalDynamo;
let parked: ParkedQueues;
let store: Store;
let clients: DashboardClients;
const cloudFormation = mockClient(CloudFormationClient);
const eventBridge = mockClient(EventBridgeClient);
const SECRET = 'Wsxedc-Surname';
let subscriptionDlq: string;

/** A bus event as a subscription's DLQ holds it: the delivery's members in its detail. */
const busEvent = (primaryKey: number, lastname: string) =>
  JSON.stringify({
    version: '0',
    'detail-type': 'person.created',
    source: 'crm-webhook-receiver',
    detail: {
      ContextIdentifier: 'CustOps',
      Entity: 'person',
      PrimaryKey: primaryKey,
      FieldValues: { lastname },
    },
  });

beforeAll(async () => {
  let tables: TableNames;
  ({ dynamo, tables, store } = await startDynamoStore());
  parked = await startParkedQueues();
  const outputs: Record<string, string> = {
    [tableOutput('rows')]: tables.rows,
    [tableOutput('events')]: tables.events,
    [tableOutput('webhooks')]: tables.webhooks,
    EventBusName: 'crm-webhook-receiver-test',
  };
  // A subscription's DLQ: a standard queue of the events EventBridge could not deliver.
  const { QueueUrl } = await parked.local.client.send(new CreateQueueCommand({ QueueName: 'people-dlq' }));
  subscriptionDlq = QueueUrl!;
  outputs.PeopleSubscriptionDeadLetterQueueUrl = subscriptionDlq;
  for (const queue of parked.local.queues) {
    outputs[queueOutputs(queue.key).url] = queue.url;
    outputs[queueOutputs(queue.key).dlqUrl] = queue.dlq.url;
  }
  const stack = Object.entries(outputs).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue }));
  cloudFormation.on(DescribeStacksCommand).resolves(describedStack(stack));
  eventBridge.on(PutEventsCommand).resolves({ FailedEntryCount: 0, Entries: [{ EventId: 'bus-1' }] });
  clients = opsClients({ sqs: parked.local.client, dynamo: dynamo.doc });
});
afterAll(async () => {
  await parked.local.close();
  await dynamo.close();
});

describe('npm run ops -- erase', () => {
  it('erases the row, its history, its parked message and its event in a subscription DLQ, and publishes receiver.row.erased with keys only', async () => {
    const created = rowEvent('person.created', { context: 'CustOps', primaryKey: 5, timestamp: at(1) });
    const event = { ...created, FieldValues: { ...created.FieldValues, lastname: SECRET } };
    const worker = createEntitiesWorker({
      ...rowWorkerDeps(store),
    });
    await worker(sqsEvent([sqsRecord(event)]), lambdaContext);
    for (const [key, name] of [
      [5, SECRET],
      [6, 'Other-Person'],
    ] as const)
      await parked.local.client.send(
        new SendMessageCommand({ QueueUrl: subscriptionDlq, MessageBody: busEvent(key, name) }),
      );
    await parked.park([
      {
        ...buildSampleBody('person.created', { context: 'CustOps', primaryKey: 5 }),
        FieldValues: { lastname: SECRET },
      },
    ]);

    const report = await main(
      ['erase', '--stage', 'test', '--context', 'CustOps', '--entity', 'person', '--id', '5'],
      clients,
    );

    expect(report).toMatchObject({
      rows: 1,
      historyRecords: 1,
      messages: { parked: 1, 'entities-dlq': 0, 'People-dlq': 1 },
      published: 1,
      busArchive: expect.stringMatching(/^none/),
    });
    expect(JSON.stringify(await store.getRow('CustOps', 'person', 5))).not.toContain(SECRET);
    expect(JSON.stringify(await store.listRowEvents('CustOps', 'person', 5))).not.toContain(SECRET);
    expect(parked.peek('parked')).toEqual([]);
    const left = parked.local.emulator.peek('people-dlq').map((message) => message.body);
    expect(left).toEqual([busEvent(6, 'Other-Person')]);
    const entries = eventBridge
      .commandCalls(PutEventsCommand)
      .flatMap((call) => call.args[0].input.Entries ?? []);
    expect(entries.map((entry) => entry.DetailType)).toEqual(['receiver.row.erased']);
    expect(JSON.parse(entries[0]!.Detail!)).toMatchObject({
      context: 'CustOps',
      entity: 'person',
      primaryKey: 5,
      rows: 1,
    });
    expect(entries[0]!.Detail).not.toContain(SECRET);
  });

  it('a wrong option is one line naming it, and nothing is erased', async () => {
    await expect(
      main(['erase', '--stage', 'test', '--entity', 'person', '--id', '5'], clients),
    ).rejects.toThrow(/^--context: /);
    await expect(
      main(['erase', '--stage', 'test', '--context', 'C', '--entity', 'person'], clients),
    ).rejects.toThrow(/^--entity and id: both for one row, neither for the whole tenant$/);
  });
});
