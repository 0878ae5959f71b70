import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { readWatchConfig } from '../../lib/config/watch.js';
import { type CrmClient, tenantEndpoints } from '../../lib/crm/index.js';
import { type PollDeps, pollWebhooks } from '../../lib/reconcile/poll/poll.js';
import { runScheduledPolls } from '../../lib/reconcile/poll/schedule.js';
import { createWebhookStore } from '../../lib/store/dynamo-webhooks.js';
import { createRecoveryStore } from '../../lib/store/recovery.js';
import { listRecoveries } from '../../lib/store/recovery-list.js';
import { createWatchStore } from '../../lib/store/watch-memory.js';
import type { RunningCrm } from '../../tools/crm/start.js';
import { setTenantStatus } from '../../tools/crm/tenant-state.js';
import { clientOf, simulator } from '../crm-client/support.js';
import { FakePublisher } from '../support/bus.js';
import { SECRET } from '../support/delivery.js';
import { dynamoStoreForFile } from '../support/dynamo.js';
import { startServer } from '../support/http-server.js';
import { startIngestServer } from '../support/ingest-server.js';
import { startSkewedCrm } from '../support/skewed-crm.js';
import { countingQueue, localSqsForFile, reconcileQueueOn } from '../support/sqs.js';
import { quietObservability } from '../support/workers.js';

const db = dynamoStoreForFile();
const sqs = localSqsForFile();

const T0 = Date.parse('2026-11-27T10:00:00.000Z');
const CONTEXT = 'Cust1';

/**
 * The receiver's table (fresh), the CRM simulator with the receiver's webhook `rows` aimed at the real
 * ingest, the reconcile queue (local SQS FIFO, counted) and a poll on a clock the test moves.
 */
async function world(env: Record<string, string> = {}, crmClient?: (crm: RunningCrm) => PollDeps['crm']) {
  const tables = await db.dynamo.createTables();
  const { crm, stop } = await simulator();
  onTestFinished(stop);
  const receiver = await startIngestServer();
  onTestFinished(receiver.close);
  const webhook = await crm.core.register(CONTEXT, {
    name: 'rows',
    events: ['contact.created', 'contact.changed'],
    targetUrl: receiver.url,
    secret: SECRET,
  });
  const receiverStore = createWebhookStore({ client: db.dynamo.doc, table: tables.webhooks });
  // The receiver accepted a delivery of `rows` for Cust1 (what the row workers record).
  const accepted = { seq: 'x', timestamp: new Date(T0 - 600_000).toISOString(), eventId: 'e-1' };
  await receiverStore.markAccepted(CONTEXT, 'rows', accepted);
  const queueUrl = await sqs.createFifoQueue(`reconcile-${tables.webhooks}`);
  const counted = countingQueue(reconcileQueueOn(sqs, queueUrl));
  const bus = new FakePublisher();
  const clock = { now: T0 };
  const deps: PollDeps = {
    crm: crmClient?.(crm) ?? (clientOf(crm) as CrmClient),
    store: createWatchStore(db.dynamo.doc, tables.webhooks),
    lastAccepted: (context, name) => receiverStore.getLastAccepted(context, name),
    queue: counted.queue,
    publisher: bus,
    recovery: createRecoveryStore(db.dynamo.doc, tables.webhooks),
    config: readWatchConfig(env),
    ...quietObservability(),
    now: () => clock.now,
  };
  /** The next poll, one interval after the last. */
  const poll = async (overrides: Partial<PollDeps> = {}) => {
    const report = await pollWebhooks({ ...deps, ...overrides });
    clock.now += deps.config.pollSeconds * 1000;
    return report;
  };
  /** Fails (503) the next deliveries of `count` changes, three attempts each, and waits for the CRM. */
  const failChanges = async (count: number) => {
    receiver.state.down = true;
    for (let i = 0; i < count; i++) crm.core.change(CONTEXT, { op: 'create', table: 'contact' } as never);
    await crm.core.dispatcher.idle();
    receiver.state.down = false;
  };
  const queued = async () => {
    const { Messages = [] } = await sqs.client.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 300 }),
    );
    return Messages.map((message) => JSON.parse(message.Body!));
  };
  const reactivated = () =>
    bus.published
      .filter((entry) => entry.DetailType === 'receiver.webhook.reactivated')
      .map((entry) => JSON.parse(entry.Detail));
  return {
    crm,
    webhook,
    receiver,
    deps,
    clock,
    poll,
    failChanges,
    queued,
    requests: counted.requests,
    reactivated,
    /** The webhooks' recovery items (what the gaps' cards show). */
    recoveries: () => listRecoveries(db.dynamo.doc, tables.webhooks, CONTEXT),
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

describe('the poll of the receiver’s webhooks in the CRM (simulator, dynalite, local SQS)', () => {
  it('finds the webhook the CRM disabled after 9 failures, sets it Active again and reconciles its gap', async () => {
    const w = await world();
    expect(await w.poll()).toMatchObject({ polled: true, webhooks: 1, enqueued: 0, reactivated: 0 });

    await w.failChanges(3); // 3 events × 3 attempts: TooManyErrors
    expect(w.crm.core.webhook(CONTEXT, w.webhook.id).state).toBe('TooManyErrors');

    const healthyAt = T0;
    const report = await w.poll();
    expect(report).toMatchObject({ webhooks: 1, enqueued: 1, reactivated: 1, failed: [], unfinished: [] });
    expect(w.crm.core.webhook(CONTEXT, w.webhook.id).state).toBe('Active');
    expect(w.receiver.tests()).toHaveLength(1); // the CRM's test delivery, answered 200 by the ingest
    expect(await w.queued()).toEqual([
      {
        context: CONTEXT,
        reason: 'poll',
        from: iso(healthyAt - 60_000),
        webhookId: w.webhook.id,
        requestedAt: iso(T0 + 300_000),
      },
    ]);
    expect(w.reactivated()).toEqual([
      { context: CONTEXT, webhookId: w.webhook.id, webhookName: 'rows', from: iso(healthyAt) },
    ]);
    // Recorded for the gap's card: when it was set Active again.
    expect(await w.recoveries()).toEqual([
      { context: CONTEXT, webhookId: w.webhook.id, reactivatedAt: iso(T0 + 300_000) },
    ]);

    // Active, counters still: healthy, nothing more.
    expect(await w.poll()).toMatchObject({ webhooks: 1, enqueued: 0, reactivated: 0 });
    expect(w.requests).toHaveLength(1);
  });

  it('a webhook Stopped by a person stays stopped (its gap is reconciled once); stopped-too sets it Active', async () => {
    const w = await world();
    await w.poll();
    await w.crm.core.setState(CONTEXT, w.webhook.id, 'Stopped');
    expect(await w.poll()).toMatchObject({ enqueued: 1, reactivated: 0 });
    expect(await w.poll()).toMatchObject({ enqueued: 0, reactivated: 0 });
    expect(w.crm.core.webhook(CONTEXT, w.webhook.id).state).toBe('Stopped');
    expect(w.receiver.tests()).toEqual([]);

    const report = await w.poll({ config: readWatchConfig({ REACTIVATE_WEBHOOKS: 'stopped-too' }) });
    expect(report).toMatchObject({ enqueued: 1, reactivated: 1 });
    expect(w.crm.core.webhook(CONTEXT, w.webhook.id).state).toBe('Active');
  });

  it('a webhook a person stopped between the poll read it and its re-activation stays stopped, counted as no failure', async () => {
    const w = await world();
    await w.poll();
    await w.failChanges(3);
    const crm = {
      ...w.deps.crm,
      activateWebhook: async (...args: Parameters<CrmClient['activateWebhook']>) => {
        await w.crm.core.setState(CONTEXT, w.webhook.id, 'Stopped');
        return w.deps.crm.activateWebhook(...args);
      },
    };
    const addMetric = vi.spyOn(w.deps.metrics, 'addMetric');
    expect(await w.poll({ crm })).toMatchObject({ reactivated: 0 });
    expect(w.crm.core.webhook(CONTEXT, w.webhook.id).state).toBe('Stopped');
    expect(addMetric.mock.calls.filter(([name]) => name === 'ReactivationFailures')).toEqual([]);
    // The next poll reads it Stopped: a person's stop, left alone.
    expect(await w.poll()).toMatchObject({ reactivated: 0 });
    expect(w.receiver.tests()).toEqual([]);
  });

  it('REACTIVATE_WEBHOOKS=false leaves a disabled webhook alone', async () => {
    const w = await world({ REACTIVATE_WEBHOOKS: 'false' });
    await w.failChanges(3);
    expect(await w.poll()).toMatchObject({ enqueued: 1, reactivated: 0 });
    expect(w.crm.core.webhook(CONTEXT, w.webhook.id).state).toBe('TooManyErrors');
    // First seen disabled: the window starts at the last delivery the receiver accepted under its name.
    expect(w.requests[0]!.from).toBe(iso(T0 - 600_000 - 60_000));
  });

  it('error counters that moved while the state stayed Active open a window from the last healthy poll', async () => {
    const w = await world();
    await w.poll();
    const healthyAt = w.clock.now;
    await w.poll();
    w.receiver.state.failNext = 1; // the first attempt fails, the CRM's retry is accepted
    w.crm.core.change(CONTEXT, { op: 'create', table: 'contact' } as never);
    await w.crm.core.dispatcher.idle();
    expect(w.crm.core.webhook(CONTEXT, w.webhook.id)).toMatchObject({ state: 'Active', totalErrors: 1 });

    expect(await w.poll()).toMatchObject({ enqueued: 1, reactivated: 0 });
    expect(w.requests).toEqual([expect.objectContaining({ reason: 'poll', from: iso(healthyAt - 60_000) })]);
    expect(await w.poll()).toMatchObject({ enqueued: 0 });
  });

  it('two polls at once act once: one re-activation, one reconcile', async () => {
    const w = await world();
    await w.poll();
    await w.failChanges(3);
    const [a, b] = await Promise.all([pollWebhooks(w.deps), pollWebhooks(w.deps)]);
    expect([a.polled, b.polled].sort()).toEqual([false, true]);
    // Without the interval's claim (a slow poll overlapping the next), each webhook's memory still decides.
    await w.failChanges(3);
    w.clock.now += 300_000;
    const always = { ...w.deps.store, claimPoll: async () => true };
    const both = await Promise.all([
      pollWebhooks({ ...w.deps, store: always }),
      pollWebhooks({ ...w.deps, store: always }),
    ]);
    expect(both.map((report) => report.reactivated).sort()).toEqual([0, 1]);
    expect(w.receiver.tests()).toHaveLength(2);
    expect(w.requests).toHaveLength(2);
  });

  it('alerts once after three failed re-activations, with backoff between them', async () => {
    const w = await world();
    await w.poll();
    await w.failChanges(3);
    w.receiver.state.down = true; // the test delivery fails too
    let calls = 0;
    const crm = {
      ...w.deps.crm,
      activateWebhook: (context: string, id: number) => {
        calls++;
        return w.deps.crm.activateWebhook(context, id);
      },
    };
    const addMetric = vi.spyOn(w.deps.metrics, 'addMetric');
    const error = vi.spyOn(w.deps.logger, 'error');
    const attempts: number[] = [];
    for (let poll = 0; poll < 8; poll++) {
      const before = calls;
      await w.poll({ crm });
      attempts.push(calls - before);
    }
    // Tried at polls 1, 2, 4 and 8 (waits of 1, 2, 4 intervals); alerted once, at the third failure.
    expect(attempts).toEqual([1, 1, 0, 1, 0, 0, 0, 1]);
    // The alarm webhook-not-reactivated watches the metric; the error line says which webhook and why.
    expect(addMetric.mock.calls.filter(([name]) => name === 'WebhookNotReactivated')).toEqual([
      ['WebhookNotReactivated', 'Count', 1],
    ]);
    expect(addMetric.mock.calls.filter(([name]) => name === 'ReactivationFailures')).toHaveLength(4);
    expect(error.mock.calls).toEqual([
      [
        expect.stringContaining('could not be set Active again'),
        expect.objectContaining({
          context: CONTEXT,
          webhookId: w.webhook.id,
          attempts: 3,
          state: 'TooManyErrors',
          error: expect.stringMatching(/test delivery with 503/),
        }),
      ],
    ]);
  });

  it('a webhook whose test delivery passes but real deliveries fail: re-activations that do not last back off and alert', async () => {
    const w = await world();
    await w.poll();
    const addMetric = vi.spyOn(w.deps.metrics, 'addMetric');
    const error = vi.spyOn(w.deps.logger, 'error');
    const reactivations: number[] = [];
    for (let poll = 0; poll < 8; poll++) {
      // Real deliveries fail (the CRM disables it again), the test delivery of a re-activation passes.
      if (w.crm.core.webhook(CONTEXT, w.webhook.id).state === 'Active') await w.failChanges(3);
      reactivations.push((await w.poll()).reactivated);
    }
    // Set Active at polls 1, 2, 4 and 8 (waits of 1, 2, 4 intervals), not at every poll.
    expect(reactivations).toEqual([1, 1, 0, 1, 0, 0, 0, 1]);
    expect(addMetric.mock.calls.filter(([name]) => name === 'WebhookNotReactivated')).toEqual([
      ['WebhookNotReactivated', 'Count', 1],
    ]);
    expect(error.mock.calls).toEqual([
      [
        expect.stringContaining('could not be set Active again'),
        expect.objectContaining({
          webhookId: w.webhook.id,
          attempts: 3,
          error: expect.stringMatching(/did not|disabled again/),
        }),
      ],
    ]);
  });

  it('a re-activation that lasts clears its count: the next outage starts from one attempt again', async () => {
    const w = await world();
    await w.poll();
    await w.failChanges(3);
    expect((await w.poll()).reactivated).toBe(1);
    for (let poll = 0; poll < 4; poll++) await w.poll(); // Active, counters still: it lasted
    await w.failChanges(3);
    expect((await w.poll()).reactivated).toBe(1);
    await w.failChanges(3);
    // The second re-activation in a row: one interval's wait (as after a first), not more.
    expect((await w.poll()).reactivated).toBe(1);
  });

  it('usage counters the CRM answers as no number are read as no counters: no window at every poll, the webhook still watched', async () => {
    const proxy = await startSkewedCrm('http://unset');
    onTestFinished(proxy.close);
    const w = await world({}, (crm) => {
      proxy.retarget(crm.url);
      return clientOf(crm, { apiUrl: proxy.apiUrl }) as CrmClient;
    });
    proxy.options.rowAs = (row) => ({ ...row, 'webhook_usage.total_errors': 'n/a' });
    const reports = [await w.poll(), await w.poll(), await w.poll()];
    expect(reports.map((report) => [report.failed.length, report.enqueued, report.webhooks])).toEqual([
      [0, 0, 1],
      [0, 0, 1],
      [0, 0, 1],
    ]);
  });

  it('a CRM that never answers does not hold the poll past its budget', async () => {
    const silent = await startServer(() => {}); // accepts, never answers
    onTestFinished(silent.close);
    let budget = Date.now() + 500;
    const w = await world(
      {},
      (crm) =>
        clientOf(crm, {
          apiUrl: `${silent.url}/{ContextIdentifier}/api/v1`,
          timeLeftMs: () => budget - Date.now(),
        }) as CrmClient,
    );
    const report = await w.poll();
    // The call was given up at the end of the budget: the context is polled next time, no failure.
    expect(report).toMatchObject({ polled: true, webhooks: 0, unfinished: [CONTEXT], failed: [] });
    budget = 0;
    expect((await w.poll()).unfinished).toEqual([CONTEXT]);
  });

  it('follows a tenant that moved: its old host’s 421 reads its state again and the context is polled next time at the new host', async () => {
    // As functions/reconcile-poll.ts builds its client.
    const w = await world({}, (crm) => clientOf(crm, tenantEndpoints()) as CrmClient);
    expect(await w.poll()).toMatchObject({ webhooks: 1, failed: [], unfinished: [] });
    setTenantStatus(w.crm.core.store.context(CONTEXT), undefined, true);
    await w.failChanges(3);

    // Cut short, not failed: the 421 is a retry later.
    expect(await w.poll()).toMatchObject({ webhooks: 0, failed: [], unfinished: [CONTEXT] });
    const report = await w.poll();
    expect(report).toMatchObject({ webhooks: 1, enqueued: 1, reactivated: 1, failed: [], unfinished: [] });
    expect(w.crm.core.webhook(CONTEXT, w.webhook.id).state).toBe('Active');
  });
});

describe('a poll stopped between its decision and the queue', () => {
  it('sends the request it wrote down at the next poll, the same message (deduplicated)', async () => {
    const w = await world({ REACTIVATE_WEBHOOKS: 'false' });
    await w.poll();
    await w.failChanges(3);
    const down = { enqueue: () => Promise.reject(new Error('SQS unavailable')) };
    expect(await w.poll({ queue: down })).toMatchObject({ failed: [CONTEXT], enqueued: 0 });
    expect(await w.poll()).toMatchObject({ failed: [], enqueued: 1 });
    expect(await w.queued()).toEqual([expect.objectContaining({ reason: 'poll', from: iso(T0 - 60_000) })]);
    expect(await w.poll()).toMatchObject({ enqueued: 0 });
  });
});

describe('the scheduled invocation (every minute: the finest an AWS schedule fires)', () => {
  const invoke = (w: Awaited<ReturnType<typeof world>>) => {
    const start = w.clock.now;
    return runScheduledPolls(w.deps, {
      timeLeftMs: () => 70_000 - (w.clock.now - start),
      wait: async (ms) => {
        w.clock.now += ms;
      },
    });
  };

  it('polls every RECONCILE_POLL_SECONDS under a minute, within the invocation', async () => {
    const w = await world({ RECONCILE_POLL_SECONDS: '10' });
    expect((await invoke(w)).map((report) => report.polled)).toEqual([true, true, true, true, true, true]);
    w.clock.now = T0 + 60_000;
    expect((await invoke(w))[0]!.polled).toBe(true);
  });

  it('polls once per RECONCILE_POLL_SECONDS above it: the invocations in between do nothing', async () => {
    const w = await world({ RECONCILE_POLL_SECONDS: '300' });
    const polled: boolean[] = [];
    for (let minute = 0; minute <= 10; minute++) {
      w.clock.now = T0 + minute * 60_000 + (minute % 2 === 0 ? 1500 : -1500); // the schedule's jitter
      polled.push(...(await invoke(w)).map((report) => report.polled));
    }
    expect(polled.map((yes, minute) => (yes ? minute : -1)).filter((minute) => minute >= 0)).toEqual([
      0, 5, 10,
    ]);
  });
});
