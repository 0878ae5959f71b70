import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { QUEUE_ENV_VARS, type QueueKey } from '../../lib/queue/port.js';
import { reconcileMessage } from '../../lib/reconcile/request.js';
import { toSqsRecord } from '../../local/lambda/event-source-mapping.js';
import { FAKE_AWS_ENV } from '../support/dynamo.js';
import { lambdaContext } from '../support/workers.js';
import { receiverAndSimulator, request, subscribe } from './support.js';

const world = receiverAndSimulator();
afterAll(() => vi.unstubAllEnvs());

describe('functions/reconcile.ts, composed from the environment', () => {
  it('reads its settings, runs a request from the reconcile queue against the CRM and puts the snapshots on the rows’ queues', async () => {
    const { client } = world.receiver.queues;
    const { QueueUrl } = await client.send(
      new CreateQueueCommand({ QueueName: 'reconcile-fn.fifo', Attributes: { FifoQueue: 'true' } }),
    );
    for (const [name, value] of Object.entries({
      ...FAKE_AWS_ENV,
      // The SQS emulator's own credentials (test/support/local-queues.ts).
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_ENDPOINT_URL_DYNAMODB: world.receiver.dynamo.endpoint,
      AWS_ENDPOINT_URL_SQS: world.receiver.queues.emulator.endpoint,
      ROWS_TABLE: world.receiver.tables.rows,
      WEBHOOKS_TABLE: world.receiver.tables.webhooks,
      RECONCILE_QUEUE_URL: QueueUrl!,
      RECONCILE_MAX_RECEIVE_COUNT: '5',
      CRM_API_URL: world.crm.apiUrl('{ContextIdentifier}'),
      CRM_CREDENTIALS: JSON.stringify({ '*': { type: 'basic', user: 'crm', password: 'crm' } }),
      ENTITIES: 'contact,person',
      POWERTOOLS_METRICS_DISABLED: 'true',
      POWERTOOLS_LOG_LEVEL: 'INFO',
      ...Object.fromEntries(
        world.receiver.queues.queues
          .filter((q) => Object.hasOwn(QUEUE_ENV_VARS, q.key))
          .map((q) => [QUEUE_ENV_VARS[q.key as QueueKey], q.url]),
      ),
    }))
      vi.stubEnv(name, value);
    for (let i = 0; i < 3; i++)
      world.crm.core.change('CustFn', { op: 'create', table: 'contact', fields: {} });
    world.crm.core.change('CustFn', { op: 'create', table: 'sale', fields: {} }); // sale: not in ENTITIES
    for (const table of ['contact', 'person'])
      world.crm.core.change('CustFn2', { op: 'create', table, fields: {} });
    await subscribe(world.crm, 'CustFn', ['contact', 'person', 'sale']);
    await subscribe(world.crm, 'CustFn2', ['contact', 'person']);
    for (const context of ['CustFn', 'CustFn2']) {
      const message = reconcileMessage(request(context, { reason: 'full', full: true }));
      await client.send(
        new SendMessageCommand({
          QueueUrl,
          MessageBody: message.body,
          MessageGroupId: message.groupId,
          MessageDeduplicationId: message.deduplicationId,
        }),
      );
    }
    const { Messages } = await client.send(
      new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 2, AttributeNames: ['All'] }),
    );
    expect(Messages).toHaveLength(2);

    vi.resetModules();
    const { handler } = (await import('../../functions/reconcile.js')) as {
      handler: (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;
    };
    const context = { ...lambdaContext, getRemainingTimeInMillis: () => 60_000 } as Context;
    const lines: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    let answers: SQSBatchResponse[];
    try {
      // Two invocations of one module at once (as the local runtime may run them): each counts its own calls.
      answers = await Promise.all(
        Messages!.map((m) => handler({ Records: [toSqsRecord(m, 'arn:reconcile', 'us-east-1')] }, context)),
      );
    } finally {
      spy.mockRestore();
    }
    for (const answer of answers) expect(answer.batchItemFailures).toEqual([]);
    const completed = lines
      .flatMap((line) => line.split('\n'))
      .filter((line) => line.includes('"reconcile completed"'))
      .map((line) => JSON.parse(line) as { context: string; apiCalls: number; rowsListed: number });
    // Each: the tenant's state, its webhooks (the lists and custom tables they name), then one page of
    // contacts and one of persons (nothing stored: no ids listed).
    expect(
      completed
        .map(({ context, apiCalls, rowsListed }) => ({ context, apiCalls, rowsListed }))
        .sort((a, b) => a.context.localeCompare(b.context)),
    ).toEqual([
      { context: 'CustFn', apiCalls: 4, rowsListed: 3 },
      { context: 'CustFn2', apiCalls: 4, rowsListed: 2 },
    ]);
    const contactQueue = world.receiver.queues.queues.find((q) => q.key === 'contact')!.url;
    const queued = await client.send(
      new ReceiveMessageCommand({ QueueUrl: contactQueue, MaxNumberOfMessages: 10, AttributeNames: ['All'] }),
    );
    // The two invocations run at once: their contexts' messages in either order.
    expect(
      (queued.Messages ?? [])
        .map((m) => {
          const body = JSON.parse(m.Body!) as {
            Event: string;
            PrimaryKey: number;
            ContextIdentifier: string;
          };
          return `${body.ContextIdentifier} ${body.Event} ${body.PrimaryKey}`;
        })
        .sort(),
    ).toEqual([
      'CustFn contact.reconciled 1',
      'CustFn contact.reconciled 2',
      'CustFn contact.reconciled 3',
      'CustFn2 contact.reconciled 1',
    ]);
    const entities = world.receiver.queues.queues.find((q) => q.key === 'entities')!.url;
    const others = await client.send(
      new ReceiveMessageCommand({ QueueUrl: entities, MaxNumberOfMessages: 10 }),
    );
    // The sale is not stored (ENTITIES), so not reconciled; the person is.
    expect((others.Messages ?? []).map((m) => JSON.parse(m.Body!).Event)).toEqual(['person.reconciled']);
  }, 60_000);
});
