import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildRegistrationTestBody,
  buildSampleBody,
  buildSampleDelivery,
  type SampleEventName,
} from '../../tools/samples.js';
import { runSimulation } from '../../tools/simulate.js';
import { adminJson, postDelivery, type RuntimeProcess, spawnLocalRuntime } from '../support/local-runtime.js';

/**
 * `npm start` as a user runs it: a child process with a fresh DATA_DIR and free ports, driven over
 * HTTP and inspected through the admin API, then restarted on the same DATA_DIR.
 */
const SECRET = 'e2e-shared-secret';
const CONTEXT = 'CustE2E';
// A short visibility timeout makes the DLQ test quick; long enough that a batch under load finishes in it.
const env = { WEBHOOK_SECRET: SECRET, LOCAL_VISIBILITY_TIMEOUT: '4' };

let dataDir: string;
let runtime: RuntimeProcess;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'crm-local-e2e-'));
  runtime = await spawnLocalRuntime({ dataDir, env });
}, 60_000);

afterAll(async () => {
  await runtime?.stop();
  rmSync(dataDir, { recursive: true, force: true });
}, 30_000);

async function deliver(event: SampleEventName, primaryKey: number, options: { secret?: string } = {}) {
  const body = buildSampleBody(event, { primaryKey, context: CONTEXT });
  const answer = await postDelivery(runtime.webhookUrl, body, 'secret' in options ? options.secret : SECRET);
  return { status: answer.status, body: await answer.text(), eventId: String(body.EventId) };
}

const admin = <T = unknown>(path: string, init?: RequestInit) => adminJson<T>(runtime.adminUrl, path, init);

interface QueueView {
  key: string;
  visible: number;
  inFlight: number;
  dlq: number;
}

describe('npm start', () => {
  it('prints a ready line, never the secret, and answers /health', async () => {
    expect(runtime.output()).toMatch(/ready in \d+ ms: POST http:\/\/127\.0\.0\.1:\d+\/webhook · admin/);
    expect(runtime.output()).not.toContain(SECRET);
    expect(await admin('/health')).toEqual({ status: 200, body: { status: 'ok' } });
  });

  it('projects contact and activity deliveries into rows', async () => {
    const created = await deliver('contact.created', 42);
    const changed = await deliver('contact.changed', 42);
    const activity = await deliver('activity.created', 7);
    expect([created.status, changed.status, activity.status]).toEqual([200, 200, 200]);

    await expect
      .poll(
        async () => (await admin<{ eventCount?: number }>(`/rows/${CONTEXT}/contact/42`)).body.eventCount,
        {
          timeout: 10_000,
        },
      )
      .toBe(2);
    const { body: row } = await admin(`/rows/${CONTEXT}/contact/42`);
    expect(row).toMatchObject({
      status: 'active',
      lastEventId: changed.eventId,
      lastEvent: 'contact.changed',
      changedFields: expect.arrayContaining(['department', 'updated']),
      fieldValues: expect.objectContaining({ registered: '2025-05-14T16:11:02.4593434+02:00' }),
      eventCount: 2,
    });
    const { body: history } = await admin<Array<{ eventId: string }>>(`/rows/${CONTEXT}/contact/42/events`);
    expect(history.map((record) => record.eventId)).toEqual([created.eventId, changed.eventId]);
    await expect
      .poll(async () => (await admin(`/rows/${CONTEXT}/activity/7`)).status, { timeout: 10_000 })
      .toBe(200);
    expect((await admin(`/rows/${CONTEXT}/contact/999`)).status).toBe(404);
  });

  it('rejects unsigned and wrongly signed row deliveries, any method but POST (405), and other paths', async () => {
    expect((await deliver('contact.changed', 43, { secret: undefined })).status).toBe(401);
    expect((await deliver('contact.changed', 43, { secret: 'wrong' })).status).toBe(401);
    const get = await fetch(runtime.webhookUrl);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    const other = await fetch(runtime.webhookUrl.replace('/webhook', '/other'), { method: 'POST' });
    expect(other.status).toBe(404);
    expect(await other.json()).toEqual({ message: 'Not Found' });
  });

  it('keeps webhook states and gap windows', async () => {
    expect((await deliver('webhook.started', 9)).status).toBe(200);
    expect((await deliver('webhook.stopped', 9)).status).toBe(200);
    await expect
      .poll(
        async () =>
          (
            await admin<Array<{ context: string; webhookId: number; stateName: string }>>('/webhooks')
          ).body.find((webhook) => webhook.context === CONTEXT && webhook.webhookId === 9)?.stateName,
        { timeout: 10_000 },
      )
      .toBe('Stopped');
    const { body: gaps } = await admin<Array<{ webhookId: number; closedAt?: string }>>(
      `/gaps?context=${CONTEXT}`,
    );
    expect(gaps).toEqual([expect.objectContaining({ webhookId: 9 })]);
    expect(gaps[0]?.closedAt).toBeUndefined();
  });

  it('answers the registration check without queuing it, and parks a signed event the spec does not cover', async () => {
    const check = buildSampleDelivery(buildRegistrationTestBody({ context: CONTEXT }), { secret: SECRET });
    const checked = await fetch(runtime.webhookUrl, {
      method: 'POST',
      headers: check.headers,
      body: check.body,
    });
    expect([checked.status, await checked.json()]).toEqual([200, { status: 'test-acknowledged' }]);

    const body = {
      ...buildSampleBody('contact.changed', { context: CONTEXT }),
      Event: 'invoice.created',
      Entity: 'invoice',
    };
    const delivery = buildSampleDelivery(body, { secret: SECRET });
    const answer = await fetch(runtime.webhookUrl, {
      method: 'POST',
      headers: delivery.headers,
      body: delivery.body,
    });
    expect(answer.status).toBe(200);
    const { body: parked } = await admin<Array<{ reason: string; body: string }>>('/parked');
    expect(parked).toEqual([expect.objectContaining({ reason: 'unknown-event', body: delivery.body })]);
  });

  it('converges under simulate: shuffled order, duplicates, concurrent senders', async () => {
    const report = await runSimulation({
      url: runtime.webhookUrl,
      adminUrl: runtime.adminUrl,
      secret: SECRET,
      events: 300,
      rows: 30,
      duplicates: 10,
      shuffle: true,
      concurrency: 10,
      seed: 3,
    });
    expect(report).toMatchObject({
      accepted: report.deliveries,
      discarded: 0,
      drained: true,
      mismatches: 0,
      deadLettered: 0,
    });
    expect(report.rowsChecked).toBe(30);
  }, 60_000);

  it('moves a message its worker keeps failing to the DLQ, shows it, and redrives it', async () => {
    const { body: info } = await admin<{
      urls: { sqs: string };
      queues: Array<{ key: string; url: string }>;
    }>('/info');
    const sqs = new SQSClient({
      endpoint: info.urls.sqs,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: info.queues.find((queue) => queue.key === 'contact')!.url,
        MessageBody: 'not a delivery',
        MessageGroupId: `${CONTEXT}:contact:poison`,
        MessageDeduplicationId: 'poison-1',
      }),
    );
    sqs.destroy();
    // maxReceiveCount 5 at a visibility timeout of 4 s.
    await expect
      .poll(
        async () => (await admin<QueueView[]>('/queues')).body.find((queue) => queue.key === 'contact')?.dlq,
        { timeout: 40_000, interval: 250 },
      )
      .toBe(1);
    const { body: dead } = await admin<Array<{ body: string; groupId: string }>>('/queues/contact/dlq');
    expect(dead).toEqual([
      expect.objectContaining({ body: 'not a delivery', groupId: `${CONTEXT}:contact:poison` }),
    ]);

    const redrive = await admin<{ moved: number; status: string }>('/queues/contact/redrive', {
      method: 'POST',
    });
    expect(redrive).toEqual({
      status: 200,
      body: expect.objectContaining({ status: 'COMPLETED', moved: 1 }),
    });
    const { body: queues } = await admin<QueueView[]>('/queues');
    expect(queues.find((queue) => queue.key === 'contact')).toMatchObject({ dlq: 0 });
    // Back on its queue it fails again, and will return to the DLQ: nothing is ever dropped.
    const { body: requeued } = await admin<Array<{ body: string }>>('/queues/contact/messages');
    expect(requeued.map((message) => message.body)).toContain('not a delivery');
  }, 60_000);

  it('keeps rows, webhook states, parked and dead-letter messages across a restart', async () => {
    const before = await admin(`/rows/${CONTEXT}/contact/42`);
    const exitCode = await runtime.stop();
    expect(runtime.output()).toMatch(/SIGTERM: stopping[\s\S]*stopped/);
    expect(exitCode === 0 || exitCode === null).toBe(true);

    runtime = await spawnLocalRuntime({ dataDir, env });
    expect(await admin(`/rows/${CONTEXT}/contact/42`)).toEqual(before);
    const { body: webhooks } = await admin<Array<{ context: string; stateName: string }>>('/webhooks');
    expect(
      webhooks.filter((webhook) => webhook.context === CONTEXT).map((webhook) => webhook.stateName),
    ).toEqual(['Stopped']);
    const { body: parked } = await admin<Array<{ reason: string }>>('/parked');
    expect(parked.map((message) => message.reason)).toEqual(['unknown-event']);
    const inQueue = await admin<Array<{ body: string }>>('/queues/contact/messages');
    const inDlq = await admin<Array<{ body: string }>>('/queues/contact/dlq');
    expect([...inQueue.body, ...inDlq.body].map((message) => message.body)).toEqual(['not a delivery']);

    // And it keeps working.
    expect((await deliver('contact.deleted', 42)).status).toBe(200);
    await expect
      .poll(async () => (await admin<{ status?: string }>(`/rows/${CONTEXT}/contact/42`)).body.status, {
        timeout: 10_000,
      })
      .toBe('deleted');
  }, 60_000);
});
