import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { QueueView } from '../../dashboard/views.js';
import { SOURCE } from '../../lib/bus/entry.js';
import { createEventBridgePublisher } from '../../lib/bus/publisher.js';
import { rowGroupId } from '../../lib/ingest/routing.js';
import type { SubscriptionView } from '../../local/bus/views.js';
import { buildSampleBody, buildSampleDelivery, dotNetTimestamp } from '../../tools/samples.js';
import { startRecorder } from '../support/http-server.js';
import { failedStart, type RuntimeProcess, spawnLocalRuntime } from '../support/local-runtime.js';

/**
 * Subscriptions through `npm start`: a subscriptions file (SUBSCRIPTIONS_FILE) whose URL targets are
 * an HTTP server of this test, and events put on the runtime's bus either by the AWS SDK's EventBridge
 * client or by the workers themselves, from deliveries sent to the ingest. Every POST the targets get
 * is in `received`, with the status it was answered: `/flaky` answers 500 to the first two POSTs of
 * an event, `/down` always answers 500.
 */
const BUS = 'crm-webhook-receiver-local';
const SECRET = 'e2e-secret';
const CONTEXT = 'CustFanout';
const LOCAL_CLIENT = { region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };

interface Received {
  path: string;
  status: number;
  body: string;
  event: { id: string; 'detail-type': string; source: string; detail: Record<string, unknown> };
}

let dataDir: string;
let target: { url: string; close(): Promise<void> };
let received: Received[];
let runtime: RuntimeProcess;
let eventBridge: EventBridgeClient;
/** GET /info of the runtime: its emulators' endpoints and queues. */
let info: { urls: { eventbridge: string; sqs: string }; queues: Array<{ key: string; url: string }> };

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'crm-local-subscriptions-'));
  const recorder = await startRecorder(
    ({ path, body }): Received => {
      const event = JSON.parse(body) as Received['event'];
      const earlier = received.filter((r) => r.path === path && r.event.id === event.id).length;
      const status = path === '/down' || (path === '/flaky' && earlier < 2) ? 500 : 200;
      return { path, status, body, event };
    },
    ({ status }) => status,
  );
  target = recorder;
  received = recorder.received;
  const { url } = recorder;
  const file = join(dataDir, 'subscriptions.yml');
  writeFileSync(
    file,
    `- name: department-changes
  pattern: { detail-type: [contact.changed], detail: { significantChanges: [department] } }
  target: { url: "${url}/department" }
- name: cleanup
  pattern: { detail-type: [contact.deleted] }
  target: { lambda: "arn:aws:lambda:eu-west-1:123456789012:function:cleanup" }
- name: flaky
  pattern: { detail-type: [activity.changed] }
  target: { url: "${url}/flaky" }
  retry: { attempts: 2, maxAgeSeconds: 60 }
- name: down
  pattern: { detail-type: [activity.created] }
  target: { url: "${url}/down" }
  retry: { attempts: 1, maxAgeSeconds: 60 }
- name: typo
  pattern: { detail-typ: [contact.changed] }
  target: { lambda: "arn:aws:lambda:eu-west-1:123456789012:function:typo" }
`,
  );
  runtime = await spawnLocalRuntime({
    dataDir: join(dataDir, 'data'),
    // Retries 20-40 ms apart, then 40-80 ms: the retry and DLQ tests take no second.
    env: { WEBHOOK_SECRET: SECRET, SUBSCRIPTIONS_FILE: file, LOCAL_BUS_BACKOFF_MS: '20' },
  });
  info = (await (await fetch(`${runtime.adminUrl}/info`)).json()) as typeof info;
  eventBridge = new EventBridgeClient({ endpoint: info.urls.eventbridge, ...LOCAL_CLIENT });
}, 60_000);

afterAll(async () => {
  eventBridge?.destroy();
  await runtime?.stop();
  await target?.close();
  rmSync(dataDir, { recursive: true, force: true });
}, 30_000);

/** Waits until no subscription has a delivery under way (retries included), as the admin API shows. */
async function deliveriesSettled(ms = 10_000): Promise<SubscriptionView[]> {
  return vi.waitFor(
    async () => {
      const views = (await (await fetch(`${runtime.adminUrl}/subscriptions`)).json()) as SubscriptionView[];
      expect(
        views.filter((view) => view.inFlight > 0).map((view) => view.name),
        'subscriptions with a delivery under way',
      ).toEqual([]);
      return views;
    },
    { timeout: ms, interval: 20 },
  );
}

/** One subscription's view, through `GET /subscriptions/{name}`. */
async function subscription(name: string): Promise<SubscriptionView> {
  return (await (await fetch(`${runtime.adminUrl}/subscriptions/${name}`)).json()) as SubscriptionView;
}

/** POSTs a body to the ingest as the CRM does (signed, every header); resolves with the status. */
async function send(body: Record<string, unknown>): Promise<number> {
  const delivery = buildSampleDelivery(body, { secret: SECRET });
  const answer = await fetch(runtime.webhookUrl, {
    method: 'POST',
    headers: delivery.headers,
    body: delivery.body,
  });
  await answer.arrayBuffer();
  return answer.status;
}

/**
 * Waits until the workers have handled every queued delivery (no queue has a message visible,
 * in flight or delayed): their batches are settled, so what they publish is on the bus.
 */
async function workersDrained(ms = 15_000): Promise<void> {
  await vi.waitFor(
    async () => {
      const queues = (await (await fetch(`${runtime.adminUrl}/queues`)).json()) as QueueView[];
      expect(
        queues.filter((q) => q.visible + q.inFlight + q.delayed > 0),
        'queues with a message visible, in flight or delayed',
      ).toEqual([]);
    },
    { timeout: ms, interval: 20 },
  );
}

/** Puts a delivery body straight on the contact queue, under a new deduplication id, as SQS redelivers. */
async function redeliver(body: string, primaryKey: number): Promise<void> {
  const sqs = new SQSClient({ endpoint: info.urls.sqs, ...LOCAL_CLIENT });
  try {
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: info.queues.find((queue) => queue.key === 'contact')!.url,
        MessageBody: body,
        MessageGroupId: rowGroupId(CONTEXT, 'contact', primaryKey),
        MessageDeduplicationId: crypto.randomUUID(),
      }),
    );
  } finally {
    sqs.destroy();
  }
}

/** What the targets received for one EventId of a delivery. */
const receivedFor = (eventId: unknown) => received.filter((r) => r.event.detail.EventId === eventId);

describe('npm start with subscriptions', () => {
  it('says in the ready line how many subscriptions it loaded, which it does not deliver locally, and which can never match', () => {
    expect(runtime.output()).toMatch(
      /^ready in \d+ ms: .* · eventbridge http:\/\/127\.0\.0\.1:\d+ · 5 subscriptions · /m,
    );
    expect(runtime.output()).toContain(
      'subscription "cleanup": lambda targets are delivered on AWS only; the local bus counts its matches',
    );
    expect(runtime.output()).toContain(
      'warning: subscription "typo" can never match: detail-typ is no field of a published event (did you mean detail-type?)',
    );
  });

  it('delivers a matching event put with the SDK client to the URL target, once, and shows it in the admin API', async () => {
    const publisher = createEventBridgePublisher({ client: eventBridge, eventBusName: BUS });
    const results = await publisher.publish([
      {
        Source: SOURCE,
        DetailType: 'contact.changed',
        Detail: '{"EventId":"e-1","significantChanges":["name"]}',
      },
      {
        Source: SOURCE,
        DetailType: 'contact.changed',
        Detail: '{"EventId":"e-2","significantChanges":["department"]}',
      },
      { Source: SOURCE, DetailType: 'contact.deleted', Detail: '{"EventId":"e-3"}' },
    ]);
    expect(results.map((result) => result.ok)).toEqual([true, true, true]);

    const views = await deliveriesSettled();
    expect(received).toEqual([
      {
        path: '/department',
        status: 200,
        body: expect.any(String),
        event: expect.objectContaining({
          id: results[1]!.ok && results[1]!.eventId,
          'detail-type': 'contact.changed',
          source: SOURCE,
          detail: { EventId: 'e-2', significantChanges: ['department'] },
        }),
      },
    ]);
    expect(views).toMatchObject([
      { name: 'department-changes', matched: 1, delivered: 1, recent: [{ eventId: 'e-2' }], dlq: [] },
      { name: 'cleanup', matched: 1, delivered: 0 },
      { name: 'flaky', matched: 0 },
      { name: 'down', matched: 0 },
      { name: 'typo', matched: 0 },
    ]);
  });

  it("fails an entry for another bus, as the workers' publisher sees it", async () => {
    const publisher = createEventBridgePublisher({
      client: eventBridge,
      eventBusName: 'crm-webhook-receiver-prod',
    });
    expect(
      await publisher.publish([{ Source: SOURCE, DetailType: 'contact.changed', Detail: '{}' }]),
    ).toEqual([
      {
        ok: false,
        errorCode: 'InvalidArgument',
        errorMessage: `Event bus crm-webhook-receiver-prod does not exist: the local runtime has the bus ${BUS}.`,
      },
    ]);
  });
});

describe('npm start with subscriptions, events published by the workers', () => {
  it('delivers each applied change once, to the subscriptions it matches, although the stream carried duplicates and resends', async () => {
    const start = Date.now();
    const at = (ms: number) => dotNetTimestamp(new Date(start + ms));
    const created = buildSampleBody('contact.created', {
      context: CONTEXT,
      primaryKey: 501,
      timestamp: at(0),
    });
    const [eventId, timestamp] = [crypto.randomUUID(), at(1)];
    const seq = `${timestamp}#${eventId}`;
    const department = {
      ...buildSampleBody('contact.changed', { context: CONTEXT, primaryKey: 501, eventId, timestamp }),
      Changes: ['name', 'department', 'updated', 'updated_associate_id', 'updatedCount', 'dbi_last_modified'],
    };
    // The CRM's next cycle after failed attempts: the same change under a new EventId.
    const resend = { ...department, EventId: crypto.randomUUID() };
    const nameOnly = {
      ...buildSampleBody('contact.changed', { context: CONTEXT, primaryKey: 501, timestamp: at(2) }),
      Changes: ['name', 'updated', 'updated_associate_id', 'updatedCount'],
    };
    const bookkeepingOnly = {
      ...buildSampleBody('contact.changed', { context: CONTEXT, primaryKey: 502, timestamp: at(3) }),
      Changes: ['updated', 'updated_associate_id', 'updatedCount', 'dbi_last_modified'],
    };
    const stream = [created, department, department, nameOnly, resend, nameOnly, bookkeepingOnly, resend];

    const statuses = [];
    for (const body of stream) statuses.push(await send(body));
    await workersDrained();
    // The same delivery once more, as the worker gets it after SQS's 5-minute deduplication window.
    await redeliver(JSON.stringify(department), 501);
    await workersDrained();
    await deliveriesSettled();

    expect(statuses).toEqual(stream.map(() => 200));
    const history = (await (
      await fetch(`${runtime.adminUrl}/rows/${CONTEXT}/contact/501/events`)
    ).json()) as Array<{ eventId: string; resendOf?: string }>;
    expect(history.find((record) => record.eventId === resend.EventId)).toMatchObject({ resendOf: seq });
    expect(received.filter((r) => r.event.detail.ContextIdentifier === CONTEXT)).toEqual([
      {
        path: '/department',
        status: 200,
        body: expect.any(String),
        event: {
          version: '0',
          id: expect.any(String),
          'detail-type': 'contact.changed',
          source: SOURCE,
          account: '000000000000',
          time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
          region: 'us-east-1',
          resources: [],
          detail: {
            ...department,
            significantChanges: ['name', 'department'],
            seq,
            outcome: 'applied',
            echo: false,
            row: expect.objectContaining({
              status: 'active',
              fieldValues: created.FieldValues,
              lastEventId: eventId,
              lastTimestamp: timestamp,
            }),
          },
        },
      },
    ]);
    expect((await subscription('department-changes')).recent[0]).toMatchObject({
      eventId,
      attempts: 1,
    });
  });

  it('retries a target that fails its first answers, on the LOCAL_BUS_BACKOFF_MS schedule, then delivers the event once', async () => {
    const changed = buildSampleBody('activity.changed', { context: CONTEXT, primaryKey: 601 });

    expect(await send(changed)).toBe(200);
    await workersDrained();
    await deliveriesSettled();
    const view = await subscription('flaky');

    const posts = receivedFor(changed.EventId);
    expect(posts.map((r) => [r.path, r.status])).toEqual([
      ['/flaky', 500],
      ['/flaky', 500],
      ['/flaky', 200],
    ]);
    expect(new Set(posts.map((r) => r.body)).size).toBe(1);
    expect(view).toMatchObject({ delivered: 1, inFlight: 0, dlq: [] });
    expect(view.recent[0]).toMatchObject({ eventId: changed.EventId, attempts: 3 });
    expect(view.failures.slice(0, 2)).toMatchObject([
      { eventId: changed.EventId, attempt: 2, error: 'HTTP 500' },
      { eventId: changed.EventId, attempt: 1, error: 'HTTP 500' },
    ]);
    // The default backoff (1 s) waits 1.5 s at least before a third attempt.
    const span = Date.parse(view.recent[0]!.at) - Date.parse(view.failures[1]!.at);
    expect(span).toBeLessThan(1000);
  });

  it('puts the event of a target that always fails in its DLQ once its retries are spent, shown by the admin API', async () => {
    const created = buildSampleBody('activity.created', { context: CONTEXT, primaryKey: 602 });

    expect(await send(created)).toBe(200);
    await workersDrained();
    await deliveriesSettled();

    const posts = receivedFor(created.EventId);
    expect(posts.map((r) => [r.path, r.status])).toEqual([
      ['/down', 500],
      ['/down', 500],
    ]);
    const view = await subscription('down');
    expect(view).toMatchObject({ matched: 1, delivered: 0, inFlight: 0, recent: [] });
    expect(view.dlq).toEqual([
      {
        id: posts[0]!.event.id,
        eventId: created.EventId,
        detailType: 'activity.created',
        attempts: 2,
        at: expect.any(String),
        error: 'HTTP 500',
        event: posts[0]!.body,
      },
    ]);
  });
});

describe('npm start with a subscriptions file it cannot use', () => {
  const failed = (env: Record<string, string>) =>
    failedStart({ dataDir: join(dataDir, 'failed'), env: { WEBHOOK_SECRET: 'e2e-secret', ...env } });

  it('stops the start with one line and exit 2 for a pattern the local matcher cannot evaluate, or a missing file', async () => {
    const file = join(dataDir, 'invalid.yml');
    writeFileSync(
      file,
      `- { name: typo, pattern: { detail: { n: [{ numbr: [">", 1] }] } }, target: { url: "http://127.0.0.1:9/x" } }\n`,
    );
    expect(await failed({ SUBSCRIPTIONS_FILE: file })).toEqual({
      code: 2,
      lines: [
        `${file}: subscription "typo": pattern: invalid event pattern at detail.n[0]: unknown operator "numbr"; ` +
          'accepted: anything-but, cidr, equals-ignore-case, exists, numeric, prefix, suffix, wildcard',
      ],
    });
    expect(await failed({ SUBSCRIPTIONS_FILE: join(dataDir, 'missing.yml') })).toEqual({
      code: 2,
      lines: [`${join(dataDir, 'missing.yml')}: cannot be read (SUBSCRIPTIONS_FILE names a missing file?)`],
    });
  }, 60_000);
});
