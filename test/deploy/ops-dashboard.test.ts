import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient, GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import {
  DescribeApiDestinationCommand,
  EventBridgeClient,
  ListRulesCommand,
  ListTargetsByRuleCommand,
} from '@aws-sdk/client-eventbridge';
import {
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListMessageMoveTasksCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HttpError } from '../../dashboard/route-server.js';
import { compressBody } from '../../lib/store/body-codec.js';
import { SCAN_SEGMENTS } from '../../lib/store/event-lookup.js';
import { applyStateEvent } from '../../lib/webhook-state.js';
import { createAwsSource } from '../../scripts/ops/aws-source.js';
import { readOutputs } from '../../scripts/ops/commands.js';
import { outcomeSeries } from '../../scripts/ops/outcome-metrics.js';
import { type DashboardClients, main } from '../../scripts/ops.js';
import { httpRequest } from '../../tools/http-client.js';
import { buildSampleBody } from '../../tools/samples.js';
import { arn, describedStack, opsClients, parkedMessage, url } from '../support/stack-outputs.js';
import { stateEvent } from '../support/workers.js';

const EVENTS_TABLE = 'crm-webhook-receiver-test-events';
const WEBHOOKS_TABLE = 'crm-webhook-receiver-test-webhooks';
const BODY =
  '{"EventId":"e-1","ContextIdentifier":"Cust1","Event":"contact.created","Timestamp":"2025-05-14T12:00:00Z","ChangedByAssociateId":7}';

describe('npm run ops -- dashboard', () => {
  const cloudFormation = mockClient(CloudFormationClient);
  const sqs = mockClient(SQSClient);
  const dynamo = mockClient(DynamoDBDocumentClient);
  const cloudWatch = mockClient(CloudWatchClient);
  const eventBridge = mockClient(EventBridgeClient);
  let clients: DashboardClients;

  beforeEach(() => {
    for (const mock of [cloudFormation, sqs, dynamo, cloudWatch, eventBridge]) mock.reset();
    cloudFormation.on(DescribeStacksCommand).resolves(describedStack());
    sqs.on(GetQueueAttributesCommand).resolves({
      Attributes: {
        ApproximateNumberOfMessages: '3',
        ApproximateNumberOfMessagesNotVisible: '1',
        ApproximateNumberOfMessagesDelayed: '0',
      },
    });
    sqs.on(StartMessageMoveTaskCommand).resolves({ TaskHandle: 'handle-1' });
    sqs.on(ListMessageMoveTasksCommand).resolves({
      Results: [{ Status: 'COMPLETED', ApproximateNumberOfMessagesMoved: 2 }],
    });
    cloudWatch.on(GetMetricDataCommand).resolves({ MetricDataResults: [] });
    eventBridge.on(ListRulesCommand).resolves({ Rules: [] });
    dynamo.on(ScanCommand).resolves({ Items: [] });
    dynamo.on(QueryCommand, { IndexName: 'byEventId' }).resolves({
      Items: [{ eventId: 'e-1', rowKey: 'contact#42#Cust1', seq: 's-1' }],
    });
    dynamo.on(QueryCommand, { KeyConditionExpression: 'rowKey = :k' }).resolves({
      Items: [
        {
          rowKey: 'contact#42#Cust1',
          seq: 's-1',
          eventId: 'e-1',
          body: compressBody(BODY),
          echo: false,
          recordedAt: '2025-05-14T12:00:01.000Z',
          expiresAt: 1,
        },
      ],
    });
    clients = opsClients();
  });

  const source = async () =>
    createAwsSource({
      clients,
      outputs: await readOutputs(clients, 'test'),
      stage: 'test',
      region: 'eu-west-1',
    });

  describe('the AWS data source', () => {
    it('queues: GetQueueAttributes on each queue and its DLQ by the stack’s URLs, nothing received', async () => {
      const queues = await (await source()).queues();

      expect(queues[0]).toEqual({
        key: 'contact',
        name: 'crm-webhook-receiver-test-contact.fifo',
        visible: 3,
        inFlight: 1,
        delayed: 0,
        dlq: 4,
        dlqName: 'crm-webhook-receiver-test-contact-dlq.fifo',
      });
      expect(queues.map((queue) => queue.key)).toEqual([
        'contact',
        'activity',
        'webhookState',
        'entities',
        'parked',
        'reconcile',
      ]);
      const calls = sqs.commandCalls(GetQueueAttributesCommand).map((call) => call.args[0].input.QueueUrl);
      expect(calls.sort()).toEqual(
        ['contact', 'activity', 'webhook-state', 'entities', 'parked', 'reconcile']
          .flatMap((name) => [url(name), url(`${name}-dlq`)])
          .sort(),
      );
      expect(sqs.commandCalls(ReceiveMessageCommand)).toHaveLength(0);
    });

    it('outcomes: one GetMetricData of the five outcome metrics per minute, service dimension, last hour', async () => {
      const now = Date.parse('2025-05-14T12:30:20Z');
      cloudWatch.on(GetMetricDataCommand).resolves({
        MetricDataResults: [
          { Id: 'm0', Timestamps: [new Date('2025-05-14T12:29:00Z')], Values: [7] },
          { Id: 'm4', Timestamps: [new Date('2025-05-14T12:30:00Z')], Values: [2] },
        ],
      });

      const series = await outcomeSeries(clients.cloudWatch, { service: 'crm-webhook-receiver', now });

      const input = cloudWatch.commandCalls(GetMetricDataCommand)[0]!.args[0].input;
      expect(input.StartTime).toEqual(new Date('2025-05-14T11:31:00Z'));
      expect(input.EndTime).toEqual(new Date('2025-05-14T12:31:00Z'));
      expect(input.MetricDataQueries?.map((query) => query.MetricStat)).toEqual(
        ['EventsApplied', 'EventsLate', 'EventsDuplicate', 'Parked', 'Refused'].map((MetricName) => ({
          Metric: {
            Namespace: 'CrmWebhookReceiver',
            MetricName,
            Dimensions: [{ Name: 'service', Value: 'crm-webhook-receiver' }],
          },
          Period: 60,
          Stat: 'Sum',
        })),
      );
      expect(series.outcomes).toEqual(['applied', 'late', 'duplicate', 'parked', 'refused']);
      expect(series.perMinute).toHaveLength(60);
      expect(series.perMinute.at(-2)).toEqual({
        minute: '2025-05-14T12:29:00.000Z',
        applied: 7,
        late: 0,
        duplicate: 0,
        parked: 0,
        refused: 0,
      });
      expect(series.perMinute.at(-1)).toMatchObject({ minute: '2025-05-14T12:30:00.000Z', refused: 2 });
    });

    it('find by EventId: the events table’s EventId index, then that row’s history; no queue received', async () => {
      const found = await (await source()).findEvent('e-1');

      expect(dynamo.commandCalls(QueryCommand)[0]!.args[0].input).toMatchObject({
        TableName: EVENTS_TABLE,
        IndexName: 'byEventId',
        KeyConditionExpression: 'eventId = :id',
        ExpressionAttributeValues: { ':id': 'e-1' },
      });
      expect(found.places).toEqual([
        expect.objectContaining({ where: 'row', context: 'Cust1', entity: 'contact', primaryKey: 42 }),
      ]);
      expect(found.searched).toContain('not the queues');
      expect(dynamo.commandCalls(ScanCommand)[0]!.args[0].input.TableName).toBe(WEBHOOKS_TABLE);
      expect(sqs.calls()).toHaveLength(0);
    });

    it('find by EventId on a stage without the index (eventIdIndex off): a parallel scan of the events table', async () => {
      dynamo.on(QueryCommand, { IndexName: 'byEventId' }).rejects(
        Object.assign(new Error('The table does not have the specified index'), {
          name: 'ValidationException',
        }),
      );
      dynamo.on(ScanCommand, { TableName: EVENTS_TABLE, Segment: 3 }).resolves({
        Items: [{ rowKey: 'contact#42#Cust1' }],
      });

      const found = await (await source()).findEvent('e-1');

      const scans = dynamo
        .commandCalls(ScanCommand)
        .map((call) => call.args[0].input)
        .filter((input) => input.TableName === EVENTS_TABLE);
      expect(scans.map((input) => input.Segment).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(scans[0]).toMatchObject({
        TotalSegments: SCAN_SEGMENTS,
        FilterExpression: 'eventId = :id',
        ExpressionAttributeValues: { ':id': 'e-1' },
      });
      expect(found.places).toEqual([
        expect.objectContaining({ where: 'row', context: 'Cust1', entity: 'contact', primaryKey: 42 }),
      ]);
      expect(found.searched).toContain('a parallel scan of the events table');
    });

    it('parked: only as `ops parked` looks (at most 10, hidden 30 s), marked in flight, with the reason; then the parked DLQ', async () => {
      sqs
        .on(ReceiveMessageCommand, { QueueUrl: url('parked') })
        .resolvesOnce({ Messages: [parkedMessage(2)] })
        .resolves({ Messages: [] });
      sqs
        .on(ReceiveMessageCommand, { QueueUrl: url('parked-dlq') })
        .resolvesOnce({ Messages: [{ ...parkedMessage(5), MessageId: 'm-dead', Body: 'null' }] })
        .resolves({ Messages: [] });
      const aws = await source();

      const parked = await aws.parked(100);

      expect(parked).toEqual([
        expect.objectContaining({
          where: 'parked',
          messageId: 'm-1',
          receiveCount: 2,
          inFlight: true,
          reason: 'unknown-event',
          event: 'sale.created',
        }),
        expect.objectContaining({ where: 'dlq', messageId: 'm-dead', event: undefined, eventId: undefined }),
      ]);
      expect(sqs.commandCalls(ReceiveMessageCommand).map((call) => call.args[0].input)).toEqual(
        // Each look: up to 10, then what is left of the 10 until an empty answer.
        [
          ['parked', 10],
          ['parked', 9],
          ['parked-dlq', 10],
          ['parked-dlq', 9],
        ].map(([queue, max]) => ({
          QueueUrl: url(String(queue)),
          MaxNumberOfMessages: max,
          VisibilityTimeout: 30,
          WaitTimeSeconds: 0,
          MessageSystemAttributeNames: ['MessageGroupId', 'ApproximateReceiveCount'],
          MessageAttributeNames: ['All'],
        })),
      );
      expect(aws.info).toMatchObject({ kind: 'aws', live: false, parkedOnRequest: true });
      expect(aws.info.parkedNote).toContain('counts toward their maxReceiveCount (5)');
    });

    it('subscriptions: the rules on the stage’s bus, their targets, DLQ depths and 24 h of AWS/Events metrics; nothing received', async () => {
      const bus = 'crm-webhook-receiver-test';
      const events = 'arn:aws:events:eu-west-1:123456789012';
      const queueArn = (name: string) => `arn:aws:sqs:eu-west-1:123456789012:${bus}-${name}`;
      eventBridge.on(ListRulesCommand).resolves({
        Rules: [
          { Name: `${bus}-department-changes`, EventPattern: '{"detail-type":["contact.changed"]}' },
          { Name: `${bus}-sales`, EventPattern: '{"detail-type":["sale.sold"]}' },
        ],
      });
      eventBridge.on(ListTargetsByRuleCommand, { Rule: `${bus}-department-changes` }).resolves({
        Targets: [
          {
            Id: 'department-changes',
            Arn: `${events}:api-destination/${bus}-department-changes/0f1e`,
            DeadLetterConfig: { Arn: queueArn('department-changes-dlq') },
          },
        ],
      });
      eventBridge.on(ListTargetsByRuleCommand, { Rule: `${bus}-sales` }).resolves({
        Targets: [{ Id: 'sales', Arn: queueArn('sales'), DeadLetterConfig: { Arn: queueArn('sales-dlq') } }],
      });
      eventBridge
        .on(DescribeApiDestinationCommand)
        .resolves({ InvocationEndpoint: 'https://example.com/crm/department' });
      sqs.on(GetQueueUrlCommand).callsFake(({ QueueName }) => ({ QueueUrl: `https://sqs/${QueueName}` }));
      sqs.on(GetQueueAttributesCommand, { QueueUrl: `https://sqs/${bus}-department-changes-dlq` }).resolves({
        Attributes: { ApproximateNumberOfMessages: '2', ApproximateNumberOfMessagesNotVisible: '0' },
      });
      sqs.on(GetQueueAttributesCommand, { QueueUrl: `https://sqs/${bus}-sales-dlq` }).resolves({
        Attributes: { ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '0' },
      });
      cloudWatch.on(GetMetricDataCommand).resolves({
        MetricDataResults: [
          { Id: 'r0m0', Values: [5, 1] },
          { Id: 'r0m1', Values: [6] },
          { Id: 'r0m2', Values: [2] },
          { Id: 'r1m0', Values: [3] },
          { Id: 'r1m1', Values: [3] },
        ],
      });
      const aws = await source();

      const subscriptions = await aws.subscriptions();

      expect(subscriptions).toEqual([
        {
          name: 'department-changes',
          pattern: { 'detail-type': ['contact.changed'] },
          target: 'https://example.com/crm/department',
          matched: 6,
          delivered: 4,
          inFlight: null,
          failed: 2,
          dlqDepth: 2,
        },
        {
          name: 'sales',
          pattern: { 'detail-type': ['sale.sold'] },
          target: `queue ${bus}-sales`,
          matched: 3,
          delivered: 3,
          inFlight: null,
          failed: 0,
          dlqDepth: 0,
        },
      ]);
      expect(eventBridge.commandCalls(ListRulesCommand)[0]!.args[0].input).toEqual({ EventBusName: bus });
      expect(eventBridge.commandCalls(ListTargetsByRuleCommand)[0]!.args[0].input).toEqual({
        Rule: `${bus}-department-changes`,
        EventBusName: bus,
      });
      expect(eventBridge.commandCalls(DescribeApiDestinationCommand)[0]!.args[0].input).toEqual({
        Name: `${bus}-department-changes`,
      });
      expect(sqs.commandCalls(GetQueueUrlCommand).map((call) => call.args[0].input)).toEqual(
        expect.arrayContaining([
          { QueueName: `${bus}-department-changes-dlq`, QueueOwnerAWSAccountId: '123456789012' },
          { QueueName: `${bus}-sales-dlq`, QueueOwnerAWSAccountId: '123456789012' },
        ]),
      );
      const metrics = cloudWatch.commandCalls(GetMetricDataCommand);
      expect(metrics).toHaveLength(1);
      const input = metrics[0]!.args[0].input;
      expect(input.EndTime!.getTime() - input.StartTime!.getTime()).toBe(24 * 3600_000);
      expect(input.MetricDataQueries).toHaveLength(6);
      expect(input.MetricDataQueries![2]).toEqual({
        Id: 'r0m2',
        MetricStat: {
          Metric: {
            Namespace: 'AWS/Events',
            MetricName: 'FailedInvocations',
            Dimensions: [
              { Name: 'EventBusName', Value: bus },
              { Name: 'RuleName', Value: `${bus}-department-changes` },
            ],
          },
          Period: 86_400,
          Stat: 'Sum',
        },
      });
      expect(sqs.commandCalls(ReceiveMessageCommand)).toHaveLength(0);
      expect(aws.info.subscriptionsNote).toContain(
        'recent deliveries, failures and events in flight cannot be shown',
      );
    });

    it('subscriptions of a stack deployed before the event bus: a 404 that says to deploy', async () => {
      const aws = createAwsSource({
        clients,
        outputs: { ...(await readOutputs(clients, 'test')), EventBusName: undefined } as never,
        stage: 'test',
        region: 'eu-west-1',
      });

      await expect(aws.subscriptions()).rejects.toEqual(
        new HttpError(404, 'the stack has no event bus: deploy this version first'),
      );
      expect(eventBridge.calls()).toHaveLength(0);
    });

    it('redrive: StartMessageMoveTask from the queue’s DLQ ARN (back to its source), followed to its end', async () => {
      const result = await (await source()).redrive('webhook-state');

      expect(result).toEqual({ queue: 'webhookState', status: 'COMPLETED', moved: 2 });
      expect(sqs.commandCalls(StartMessageMoveTaskCommand).map((call) => call.args[0].input)).toEqual([
        { SourceArn: arn('webhook-state-dlq') },
      ]);
      expect(sqs.commandCalls(ListMessageMoveTasksCommand)[0]!.args[0].input).toEqual({
        SourceArn: arn('webhook-state-dlq'),
        MaxResults: 1,
      });
    });

    it('redrive of a queue that does not exist: 404 naming the queues, nothing started', async () => {
      await expect((await source()).redrive('contacts')).rejects.toEqual(
        new HttpError(
          404,
          'no queue contacts; queues: contact, activity, webhookState, entities, parked, reconcile',
        ),
      );
      expect(sqs.commandCalls(StartMessageMoveTaskCommand)).toHaveLength(0);
    });
  });

  describe('the server', () => {
    let close: (() => Promise<void>) | undefined;
    afterEach(async () => {
      await close?.();
      close = undefined;
    });

    it('serves the page and answers its endpoints from the stage, on 127.0.0.1 with the page token', async () => {
      const started = (await main(['dashboard', '--stage', 'test', '--port', '0'], clients)) as {
        dashboard: string;
        close: () => Promise<void>;
      };
      close = started.close;
      const base = started.dashboard.replace(/\/$/, '');
      expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const get = async (path: string) => {
        const answer = await httpRequest('GET', `${base}${path}`, {});
        return { status: answer.status, body: JSON.parse(answer.body) as unknown };
      };

      const page = await httpRequest('GET', `${base}/`, {});
      expect(page.status).toBe(200);
      const token = /name="dashboard-token" content="([^"]+)"/.exec(page.body)?.[1];
      expect(token).toMatch(/^[\w-]{43}$/);
      expect(await get('/source')).toMatchObject({
        status: 200,
        body: { kind: 'aws', name: 'stage test (eu-west-1)', live: false, parkedOnRequest: true },
      });
      expect(await get('/webhooks')).toEqual({ status: 200, body: [] });
      expect(await get('/gaps')).toEqual({ status: 200, body: [] });
      expect((await get('/queues')).body).toHaveLength(6);
      expect((await get('/outcomes')).body).toMatchObject({ outcomes: expect.any(Array) });
      expect(await get('/deliveries?after=0')).toEqual({ status: 200, body: [] });
      expect(await get('/subscriptions')).toEqual({ status: 200, body: [] });
      expect((await get('/rows/Cust1/contact/42/events')).body).toEqual([
        expect.objectContaining({ eventId: 'e-1', payload: JSON.parse(BODY) }),
      ]);
      expect((await get('/events/e-1')).body).toMatchObject({ places: [{ where: 'row', primaryKey: 42 }] });
      // None of the reads above received a message.
      expect(sqs.commandCalls(ReceiveMessageCommand)).toHaveLength(0);

      const origin = base;
      const refused = await httpRequest('POST', `${base}/queues/contact/redrive`, { origin });
      expect({ status: refused.status, type: refused.headers['content-type'] }).toEqual({
        status: 403,
        type: 'application/problem+json',
      });
      expect(sqs.commandCalls(StartMessageMoveTaskCommand)).toHaveLength(0);
      const redriven = await httpRequest('POST', `${base}/queues/contact/redrive`, {
        origin,
        'x-dashboard-token': token!,
      });
      expect(JSON.parse(redriven.body)).toEqual({ queue: 'contact', status: 'COMPLETED', moved: 2 });
      expect(sqs.commandCalls(StartMessageMoveTaskCommand)[0]!.args[0].input).toEqual({
        SourceArn: arn('contact-dlq'),
      });
      // The Host check of the local admin API applies.
      expect((await httpRequest('GET', `${base}/queues`, { host: 'evil.example' })).status).toBe(403);
    });

    it('GET /gaps: each gap with what became of its webhook’s recovery, read from the stage’s webhooks table', async () => {
      const started = applyStateEvent(
        undefined,
        stateEvent('webhook.started', {
          context: 'Cust1',
          primaryKey: 9,
          timestamp: '2026-11-27T10:00:00.0000000Z',
        }),
      );
      const stopped = applyStateEvent(
        started,
        stateEvent('webhook.stopped', {
          context: 'Cust1',
          primaryKey: 9,
          timestamp: '2026-11-27T11:00:00.0000000Z',
        }),
      );
      const reconcile = {
        status: 'failed',
        reason: 'gap-opened',
        requestedAt: '2026-11-27T11:00:00.000Z',
        startedAt: '2026-11-27T11:00:01.000Z',
        at: '2026-11-27T11:05:00.000Z',
        error: 'CrmAuthError: POST /login answered 401',
      };
      dynamo
        .on(ScanCommand, { ExpressionAttributeValues: { ':p': 'webhook#' } })
        .resolves({ Items: [{ ...stopped, sk: 'webhook#9', version: 2 }] });
      dynamo.on(ScanCommand, { ExpressionAttributeValues: { ':p': 'recovery#' } }).resolves({
        Items: [
          {
            context: 'Cust1',
            sk: 'recovery#9',
            webhookId: 9,
            reconcile,
            reconcileOrder: 1,
            reactivatedAt: '2026-11-27T11:10:00.000Z',
            reactivatedOrder: 1,
          },
        ],
      });
      const server = (await main(['dashboard', '--stage', 'test', '--port', '0'], clients)) as {
        dashboard: string;
        close: () => Promise<void>;
      };
      close = server.close;

      const answer = await httpRequest('GET', `${server.dashboard.replace(/\/$/, '')}/gaps`, {});

      expect(JSON.parse(answer.body)).toEqual([
        expect.objectContaining({
          context: 'Cust1',
          webhookId: 9,
          lastReconcile: reconcile,
          reactivatedAt: '2026-11-27T11:10:00.000Z',
        }),
      ]);
      expect(dynamo.commandCalls(ScanCommand).map((call) => call.args[0].input.TableName)).toEqual([
        WEBHOOKS_TABLE,
        WEBHOOKS_TABLE,
      ]);
    });

    it('replay: only a POST with the page token runs `ops replay-parked` (receive parked, send to its queue, delete)', async () => {
      const person = buildSampleBody('person.created', { context: 'CustOps', primaryKey: 31 });
      sqs
        .on(ReceiveMessageCommand, { QueueUrl: url('parked') })
        .resolvesOnce({
          Messages: [
            {
              MessageId: 'm-person',
              ReceiptHandle: 'handle-person',
              Body: JSON.stringify(person),
              Attributes: {
                MessageGroupId: 'CustOps:person:31',
                MessageDeduplicationId: 'sha256-of-the-body',
              },
              MessageAttributes: Object.fromEntries(
                Object.entries({
                  event: 'person.created',
                  eventId: String(person.EventId),
                  signatureVerified: 'true',
                  receivedAt: new Date().toISOString(),
                  reason: 'entity-not-enabled',
                }).map(([name, value]) => [name, { DataType: 'String', StringValue: value }]),
              ),
            },
          ],
        })
        .resolves({ Messages: [] });
      sqs.on(SendMessageCommand).resolves({ MessageId: 'sent-1' });
      sqs.on(DeleteMessageCommand).resolves({});
      const started = (await main(['dashboard', '--stage', 'test', '--port', '0'], clients)) as {
        dashboard: string;
        close: () => Promise<void>;
      };
      close = started.close;
      const base = started.dashboard.replace(/\/$/, '');
      const token = /name="dashboard-token" content="([^"]+)"/.exec(
        (await httpRequest('GET', `${base}/`, {})).body,
      )?.[1];
      const replayCalls = () => [
        sqs.commandCalls(ReceiveMessageCommand).length,
        sqs.commandCalls(SendMessageCommand).length,
        sqs.commandCalls(DeleteMessageCommand).length,
      ];

      const refused = await httpRequest('POST', `${base}/parked/replay`, { origin: base });
      expect(refused.status).toBe(403);
      expect((await httpRequest('GET', `${base}/parked/replay`, {})).status).toBe(405);
      expect(replayCalls()).toEqual([0, 0, 0]);

      const replayed = await httpRequest('POST', `${base}/parked/replay?event=person.*`, {
        origin: base,
        'x-dashboard-token': token!,
      });

      expect({ status: replayed.status, body: JSON.parse(replayed.body) }).toEqual({
        status: 200,
        body: { replayed: 1, kept: 0, keptBy: {}, complete: true },
      });
      expect(sqs.commandCalls(ReceiveMessageCommand)[0]!.args[0].input).toMatchObject({
        QueueUrl: url('parked'),
        MessageAttributeNames: ['All'],
      });
      const sent = sqs.commandCalls(SendMessageCommand).map((call) => call.args[0].input);
      expect(sent).toEqual([
        expect.objectContaining({
          QueueUrl: url('entities'),
          MessageBody: JSON.stringify(person),
          MessageGroupId: 'CustOps:person:31',
          MessageDeduplicationId: person.EventId,
        }),
      ]);
      expect(sent[0]!.MessageAttributes).not.toHaveProperty('reason');
      expect(sqs.commandCalls(DeleteMessageCommand).map((call) => call.args[0].input)).toEqual([
        { QueueUrl: url('parked'), ReceiptHandle: 'handle-person' },
      ]);
    });

    it('refuses a port outside 0-65535, naming it', async () => {
      await expect(main(['dashboard', '--stage', 'test', '--port', 'x'], clients)).rejects.toThrow(
        '--port x: an integer from 0 to 65535 accepted',
      );
    });
  });
});
