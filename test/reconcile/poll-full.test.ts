import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { readWatchConfig } from '../../lib/config/watch.js';
import type { CrmClient } from '../../lib/crm/index.js';
import { type PollDeps, pollWebhooks } from '../../lib/reconcile/poll/poll.js';
import { createWebhookStore } from '../../lib/store/dynamo-webhooks.js';
import { createWatchStore } from '../../lib/store/watch-memory.js';
import { clientOf, simulator } from '../crm-client/support.js';
import { SECRET } from '../support/delivery.js';
import { dynamoStoreForFile } from '../support/dynamo.js';
import { countingQueue, localSqsForFile, reconcileQueueOn } from '../support/sqs.js';
import { quietObservability } from '../support/workers.js';

const db = dynamoStoreForFile();
const sqs = localSqsForFile();

const T0 = Date.parse('2026-11-27T10:00:00.000Z');
const HOUR = 3_600_000;
const CONTEXTS = ['Cust1', 'Cust2'];

/**
 * The receiver's table (fresh) knowing two contexts (deliveries of `rows` accepted from each), the CRM
 * simulator holding their healthy webhooks, the reconcile queue (local SQS FIFO, counted) and a poll
 * every 300 s on a clock the test moves.
 */
async function world(env: Record<string, string> = {}) {
  const tables = await db.dynamo.createTables();
  const { crm, stop } = await simulator();
  onTestFinished(stop);
  const receiverStore = createWebhookStore({ client: db.dynamo.doc, table: tables.webhooks });
  for (const context of CONTEXTS) {
    await crm.core.register(context, {
      name: 'rows',
      events: ['contact.created'],
      targetUrl: 'http://127.0.0.1:9/webhook',
      secret: SECRET,
    });
    const accepted = { seq: 'x', timestamp: new Date(T0 - 600_000).toISOString(), eventId: 'e-1' };
    await receiverStore.markAccepted(context, 'rows', accepted);
  }
  const queueUrl = await sqs.createFifoQueue(`reconcile-${tables.webhooks}`);
  const counted = countingQueue(reconcileQueueOn(sqs, queueUrl));
  const clock = { now: T0 };
  const deps: PollDeps = {
    crm: clientOf(crm) as CrmClient,
    store: createWatchStore(db.dynamo.doc, tables.webhooks),
    lastAccepted: (context, name) => receiverStore.getLastAccepted(context, name),
    queue: counted.queue,
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
  const queued = async () => {
    const { Messages = [] } = await sqs.client.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 300 }),
    );
    return Messages.map((message) => JSON.parse(message.Body!));
  };
  return { deps, clock, poll, queued, requests: counted.requests };
}

const full = (context: string, at: number) => ({
  context,
  reason: 'full',
  full: true,
  requestedAt: new Date(at).toISOString(),
});

describe('the scheduled full pass (RECONCILE_FULL_HOURS)', () => {
  it('is off by default: the poll requests no full pass', async () => {
    const w = await world();
    for (let poll = 0; poll < 3; poll++)
      expect(await w.poll()).toMatchObject({ polled: true, webhooks: 2, enqueued: 0, fullPasses: 0 });
    expect(await w.queued()).toEqual([]);
  });

  it('requests one per context at the first poll, none within the interval, one again after it', async () => {
    const w = await world({ RECONCILE_FULL_HOURS: '1' });
    expect(await w.poll()).toMatchObject({ polled: true, enqueued: 2, fullPasses: 2, failed: [] });
    const queued = await w.queued();
    expect(queued.sort((a, b) => a.context.localeCompare(b.context))).toEqual(
      CONTEXTS.map((context) => full(context, T0)),
    );

    // The 11 polls of the rest of the hour (every 300 s) request nothing.
    while (w.clock.now < T0 + HOUR) expect(await w.poll()).toMatchObject({ polled: true, enqueued: 0 });
    expect(w.requests).toHaveLength(2);

    // An hour after the last (a schedule a little early counts: 5 s of slack).
    w.clock.now = T0 + HOUR - 2000;
    expect(await w.poll()).toMatchObject({ enqueued: 2, fullPasses: 2 });
    expect(w.requests.slice(2).sort((a, b) => a.context.localeCompare(b.context))).toEqual(
      CONTEXTS.map((context) => full(context, T0 + HOUR - 2000)),
    );
    expect(await w.poll()).toMatchObject({ enqueued: 0 });
  });

  it('two polls at once request it once per context', async () => {
    const w = await world({ RECONCILE_FULL_HOURS: '24' });
    // Without the interval's claim (a slow poll overlapping the next), and both polls reading each
    // context's memory before either writes it: the conditional write decides.
    const reading = new Map<string, Array<() => void>>();
    const always: PollDeps['store'] = {
      ...w.deps.store,
      claimPoll: async () => true,
      async loadFullPass(context) {
        const read = await w.deps.store.loadFullPass(context);
        const waiting = reading.get(context) ?? [];
        reading.set(context, waiting);
        await new Promise<void>((resolve) => {
          waiting.push(resolve);
          if (waiting.length === 2) for (const release of waiting) release();
        });
        return read;
      },
    };
    const both = await Promise.all([
      pollWebhooks({ ...w.deps, store: always }),
      pollWebhooks({ ...w.deps, store: always }),
    ]);
    expect(both.map((report) => report.fullPasses).reduce((a, b) => a + b)).toBe(2);
    expect(w.requests.map((request) => request.context).sort()).toEqual(CONTEXTS);
    expect(await w.queued()).toHaveLength(2);
  });

  it('a request written but not sent (the queue refused) is sent by the next poll, once', async () => {
    const w = await world({ RECONCILE_FULL_HOURS: '24' });
    const down = { enqueue: () => Promise.reject(new Error('SQS unavailable')) };
    const failed = await w.poll({ queue: down });
    expect(failed).toMatchObject({ enqueued: 0, fullPasses: 0 });
    expect(failed.failed.sort()).toEqual(CONTEXTS);
    // Within the interval: the request written at T0 is sent as it was (same message), not a new one.
    expect(await w.poll()).toMatchObject({ enqueued: 2, fullPasses: 2, failed: [] });
    const queued = await w.queued();
    expect(queued.sort((a, b) => a.context.localeCompare(b.context))).toEqual(
      CONTEXTS.map((context) => full(context, T0)),
    );
    expect(await w.poll()).toMatchObject({ enqueued: 0 });
  });
});
