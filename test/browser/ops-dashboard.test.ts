import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient, GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import {
  DescribeApiDestinationCommand,
  EventBridgeClient,
  ListRulesCommand,
  ListTargetsByRuleCommand,
} from '@aws-sdk/client-eventbridge';
import {
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyStateEvent } from '../../lib/webhook-state.js';
import { main } from '../../scripts/ops.js';
import { launchChromium, waitForText, withPage } from '../support/browser.js';
import { describedStack, opsClients, parkedMessage, url } from '../support/stack-outputs.js';
import { stateEvent } from '../support/workers.js';

const cloudFormation = mockClient(CloudFormationClient);
const sqs = mockClient(SQSClient);
const dynamo = mockClient(DynamoDBDocumentClient);
const cloudWatch = mockClient(CloudWatchClient);
const eventBridge = mockClient(EventBridgeClient);

let browser: Browser;
let served: { dashboard: string; close: () => Promise<void> };

beforeAll(async () => {
  cloudFormation.on(DescribeStacksCommand).resolves(describedStack());
  sqs.on(GetQueueAttributesCommand).resolves({
    Attributes: { ApproximateNumberOfMessages: '2', ApproximateNumberOfMessagesNotVisible: '0' },
  });
  sqs
    .on(ReceiveMessageCommand)
    .resolvesOnce({ Messages: [parkedMessage(3)] })
    .resolves({ Messages: [] });
  dynamo.on(ScanCommand).resolves({ Items: [] });
  cloudWatch.on(GetMetricDataCommand).resolves({
    MetricDataResults: [{ Id: 'm0', Timestamps: [new Date(Date.now() - 60_000)], Values: [7] }],
  });
  eventBridge.on(ListRulesCommand).resolves({
    Rules: [
      {
        Name: 'crm-webhook-receiver-test-department-changes',
        EventPattern: '{"detail-type":["contact.changed"],"detail":{"significantChanges":["department"]}}',
      },
    ],
  });
  eventBridge.on(ListTargetsByRuleCommand).resolves({
    Targets: [
      {
        Id: 'department-changes',
        Arn: 'arn:aws:events:eu-west-1:123456789012:api-destination/crm-webhook-receiver-test-department-changes/0f1e',
        DeadLetterConfig: {
          Arn: 'arn:aws:sqs:eu-west-1:123456789012:crm-webhook-receiver-test-department-changes-dlq',
        },
      },
    ],
  });
  eventBridge
    .on(DescribeApiDestinationCommand)
    .resolves({ InvocationEndpoint: 'https://example.com/crm/department' });
  sqs.on(GetQueueUrlCommand).resolves({ QueueUrl: 'https://sqs/department-changes-dlq' });
  browser = await launchChromium();
  served = (await main(['dashboard', '--stage', 'test', '--port', '0'], opsClients())) as typeof served;
});

afterAll(async () => {
  await served?.close();
  await browser?.close();
  for (const mock of [cloudFormation, sqs, dynamo, cloudWatch, eventBridge]) mock.restore();
});

describe('the ops dashboard in Chromium, on mocked AWS clients', () => {
  it('overview from the stage, says what a parked look costs, and looks only when asked', async () => {
    await withPage(browser, 'ops-overview', async (page) => {
      await page.goto(served.dashboard);
      await waitForText(page.locator('#source'), 'Reading stage test (eu-west-1) with your AWS credentials.');
      expect(await page.locator('#source').textContent()).toContain(
        'counts toward their maxReceiveCount (5)',
      );
      await waitForText(page.locator('tr[data-queue="parked"]'), '⚠ 2');
      // The five queues of the ingest and the reconcile queue.
      expect(await page.locator('tbody tr[data-queue]').count()).toBe(6);
      await waitForText(page.locator('.legend li').first(), 'applied: 7');

      await page.goto(`${served.dashboard}#/live`);
      await waitForText(page.locator('main .note'), 'Live is local only');

      await page.goto(`${served.dashboard}#/parked`);
      const look = page.getByRole('button', { name: 'Look at the parked deliveries (a receive)' });
      await look.waitFor();
      expect(sqs.commandCalls(ReceiveMessageCommand)).toHaveLength(0);
      await look.press('Enter');
      await waitForText(page.locator('tr[data-message="m-1"]'), '‖ unknown-event');
      // The parked queue until an empty answer, then its DLQ.
      expect(sqs.commandCalls(ReceiveMessageCommand).map((call) => call.args[0].input.QueueUrl)).toEqual([
        url('parked'),
        url('parked'),
        url('parked-dlq'),
      ]);
    });
  });

  it('replay on the stage: says what it decides with, answers, then offers a look instead of receiving', async () => {
    await withPage(browser, 'ops-replay', async (page) => {
      await page.goto(`${served.dashboard}#/parked`);
      await page.getByRole('button', { name: 'Replay parked deliveries' }).press('Enter');
      const dialog = page.locator('dialog[open]');
      await waitForText(dialog, "Decided with the stage's IngestSettings output");
      const receives = sqs.commandCalls(ReceiveMessageCommand).length;
      await dialog.getByRole('button', { name: 'Replay', exact: true }).press('Enter');

      // The mocked parked queue is empty by now: the replay receives, finds nothing, and says so.
      await waitForText(page.locator('.replay-result'), 'Replay: 0 replayed, 0 kept.');
      expect(sqs.commandCalls(ReceiveMessageCommand).length).toBeGreaterThan(receives);
      const afterReplay = sqs.commandCalls(ReceiveMessageCommand).length;
      await page.getByRole('button', { name: 'Look at the parked deliveries (a receive)' }).waitFor();
      expect(sqs.commandCalls(ReceiveMessageCommand)).toHaveLength(afterReplay);
    });
  });

  it('subscriptions from the stage: the rule’s pattern in words, target, DLQ depth, and what AWS cannot show', async () => {
    const receives = sqs.commandCalls(ReceiveMessageCommand).length;
    await withPage(browser, 'ops-subscriptions', async (page) => {
      await page.goto(`${served.dashboard}#/subscriptions`);
      const card = page.locator('article[data-subscription="department-changes"]');
      await card.waitFor();
      expect(await page.locator('main .note').textContent()).toContain(
        'recent deliveries, failures and events in flight cannot be shown',
      );
      expect(await card.locator('ul.pattern').textContent()).toContain(
        'detail.significantChanges: "department"',
      );
      expect(await card.locator('dd.mono').textContent()).toBe('https://example.com/crm/department');
      expect(await card.locator('dd[data-count="inFlight"]').textContent()).toBe('not observable here');
      // The GetQueueAttributes mock answers 2 visible messages: the DLQ's depth, counted, not received.
      expect(await card.locator('dd[data-count="dlq"]').textContent()).toBe('⚠ 2 waiting');
      expect(await card.locator('table').count()).toBe(0);
      expect(sqs.commandCalls(ReceiveMessageCommand)).toHaveLength(receives);
    });
  });

  /** The stage's webhook 7 of CustOps with a gap, and its recovery item: `reconcile` and when it was set Active again. */
  function stageGap(reconcile: Record<string, unknown>) {
    const event = (name: 'webhook.started' | 'webhook.stopped', timestamp: string) =>
      stateEvent(name, { context: 'CustOps', primaryKey: 7, timestamp });
    const webhook = applyStateEvent(
      applyStateEvent(undefined, event('webhook.started', '2026-11-27T10:00:00.0000000Z')),
      event('webhook.stopped', '2026-11-27T11:00:00.0000000Z'),
    );
    dynamo
      .on(ScanCommand, { ExpressionAttributeValues: { ':p': 'webhook#' } })
      .resolves({ Items: [{ ...webhook, sk: 'webhook#7', version: 2 }] });
    dynamo.on(ScanCommand, { ExpressionAttributeValues: { ':p': 'recovery#' } }).resolves({
      Items: [
        {
          context: 'CustOps',
          sk: 'recovery#7',
          webhookId: 7,
          reconcile: {
            reason: 'gap-closed',
            requestedAt: '2026-11-27T11:00:00.000Z',
            startedAt: '2026-11-27T11:00:01.000Z',
            at: '2026-11-27T11:20:00.000Z',
            ...reconcile,
          },
          reactivatedAt: '2026-11-27T11:30:00.000Z',
        },
      ],
    });
  }

  it('a gap’s card: its webhook’s last reconcile failed, with its error line, and when the poll set it Active again', async () => {
    const error = 'CrmAuthError: POST /login answered 401: the CRM refused the credentials';
    stageGap({ status: 'failed', error });
    await withPage(browser, 'ops-gap-recovery', async (page) => {
      await page.goto(served.dashboard);
      const card = page.locator('article[data-webhook="CustOps/7"]');
      const last = card.locator('.last-reconcile');
      await waitForText(last, 'Last reconcile (queued when the gap closed, requested ');
      expect(await last.getAttribute('data-status')).toBe('failed');
      expect(await last.textContent()).toMatch(new RegExp(`✖ failed .+: ${error}$`));
      expect(await card.locator('.reactivated time').getAttribute('datetime')).toBe(
        '2026-11-27T11:30:00.000Z',
      );
      // The stage offers no Reconcile button (`npm run ops -- reconcile` queues one there).
      expect(await card.getByRole('button', { name: 'Reconcile' }).count()).toBe(0);
    });
  });

  it('a gap’s card: the deletes its last reconcile held, said with how many and why, and no button on a stage', async () => {
    const why =
      "40 of its 50 stored rows are not in the CRM's list of ids, more than a run deletes (10: RECONCILE_MAX_DELETES, RECONCILE_MAX_DELETES_PERCENT): none deleted; if the CRM did delete them, reconcile it again with maxDeletes=40";
    stageGap({
      status: 'completed',
      to: '2026-11-27T11:00:01.000Z',
      rowsListed: 3,
      rowsChanged: 1,
      rowsDeleted: 0,
      apiCalls: 5,
      notReconciled: { contact: why },
      deletesHeld: { contact: 40 },
    });
    await withPage(browser, 'ops-held-deletes', async (page) => {
      await page.goto(served.dashboard);
      const card = page.locator('article[data-webhook="CustOps/7"]');
      const held = card.locator('.deletes-held li[data-entity="contact"]');
      await waitForText(held, `⚠ Deletes held back: contact, 40 rows: ${why}.`);
      // `npm run ops -- reconcile --max-deletes 40` applies them there.
      expect(await card.getByRole('button').filter({ hasText: 'Delete' }).count()).toBe(0);
    });
  });
});
