import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import { bookkeepingFilter, buildEntry, DEFAULT_BOOKKEEPING_FIELDS } from '../../lib/bus/entry.js';
import { parseSubscriptions } from '../../lib/bus/subscriptions.js';
import { lifecycleEntry } from '../../lib/reconcile/records/lifecycle.js';
import { startLocalBus } from '../../local/bus/local-bus.js';
import type { LocalBus, LocalBusOptions } from '../../local/bus/types.js';
import { buildSampleBody } from '../../tools/samples.js';
import { removeJournals, type StatusTarget, statusTarget, tempJournal } from '../support/bus.js';
import { startLocalSqs } from '../support/sqs.js';

const BIG = '9223372036854775807';
const FAST = { baseMs: 5, maxMs: 20 };

/** A {@link statusTarget} closed after the test. */
async function target(...statuses: number[]) {
  const started = await statusTarget(...statuses);
  targets.push(started);
  return started;
}

const targets: StatusTarget[] = [];
const buses: LocalBus[] = [];
afterEach(async () => {
  await Promise.all(buses.splice(0).map((bus) => bus.close()));
  await Promise.all(targets.splice(0).map((started) => started.close()));
  removeJournals();
});

/** The entry a worker would publish for a contact.changed with these Changes and a long in FieldValues. */
function changed(changes: string[]) {
  const body = JSON.stringify(buildSampleBody('contact.changed', { primaryKey: 42 }))
    .replace(/"Changes":\[[^\]]*\]/, `"Changes":${JSON.stringify(changes)}`)
    .replace(/}$/, `,"FieldValues":{"big":${BIG}}}`);
  const row = { status: 'active' as const, changedFields: changes, lastEventId: 'e', lastTimestamp: 't' };
  return buildEntry(
    { body, seq: 's', outcome: 'applied', echo: false, row },
    bookkeepingFilter(DEFAULT_BOOKKEEPING_FIELDS),
  );
}

async function bus(
  yaml: string,
  env: Record<string, string> = {},
  options: Partial<LocalBusOptions> = {},
): Promise<LocalBus> {
  const started = await startLocalBus({
    subscriptions: parseSubscriptions(yaml, 'subscriptions.yml', 'local'),
    journalPath: tempJournal(),
    backoff: FAST,
    env,
    ...options,
  });
  buses.push(started);
  return started;
}

const departmentPattern = '{ detail-type: [contact.changed], detail: { significantChanges: [department] } }';

describe('local bus', () => {
  it('POSTs only matching events, as the JSON EventBridge sends, with the auth header from its variable', async () => {
    const { url, received } = await target(200);
    const local = await bus(
      `- name: dept
  pattern: ${departmentPattern}
  target: { url: "${url}" }
  auth: { header: X-Api-Key, parameter: /dept/key, env: DEPT_KEY }
`,
      { DEPT_KEY: 's3cret' },
    );

    const results = await local.publish([changed(['updated', 'name']), changed(['department', 'updated'])]);
    await local.idle();

    expect(results.every((r) => r.ok)).toBe(true);
    expect(received).toHaveLength(1);
    const [only] = received;
    expect(only?.headers['x-api-key']).toBe('s3cret');
    expect(only?.headers['content-type']).toBe('application/json; charset=utf-8');
    const event = JSON.parse(only!.body);
    expect(Object.keys(event)).toEqual([
      'version',
      'id',
      'detail-type',
      'source',
      'account',
      'time',
      'region',
      'resources',
      'detail',
    ]);
    expect(event).toMatchObject({
      version: '0',
      'detail-type': 'contact.changed',
      source: 'crm-webhook-receiver',
    });
    expect(event.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(event.detail.significantChanges).toEqual(['department']);
    expect(only?.body).toContain(`"FieldValues":{"big":${BIG}}`);
    const [view] = local.view();
    expect(view).toMatchObject({ name: 'dept', matched: 1, delivered: 1, failures: [], dlq: [] });
  });

  it('retries a target that fails its first answers (5xx, 429), then delivers once', async () => {
    const { url, received } = await target(500, 429, 503, 200);
    const local = await bus(
      `- { name: flaky, pattern: { source: [crm-webhook-receiver] }, target: { url: "${url}" } }\n`,
    );

    await local.publish([changed(['department'])]);
    await local.idle();

    expect(received).toHaveLength(4);
    expect(new Set(received.map((r) => JSON.parse(r.body).id)).size).toBe(1);
    const [view] = local.view();
    expect(view?.delivered).toBe(1);
    expect(view?.recent[0]?.attempts).toBe(4);
    expect(view?.failures.map((f) => f.error)).toEqual(['HTTP 503', 'HTTP 429', 'HTTP 500']);
    expect(view?.dlq).toEqual([]);
  });

  it('puts an event in the DLQ once its retries are spent, with the event and the last error', async () => {
    const { url, received } = await target(500);
    const local = await bus(
      `- { name: down, pattern: { source: [crm-webhook-receiver] }, target: { url: "${url}" }, retry: { attempts: 2 } }\n`,
    );

    await local.publish([changed(['department'])]);
    await local.idle();

    expect(received).toHaveLength(3);
    const [view] = local.view();
    expect(view?.delivered).toBe(0);
    expect(view?.dlq).toHaveLength(1);
    expect(view?.dlq[0]).toMatchObject({ attempts: 3, error: 'HTTP 500', detailType: 'contact.changed' });
    expect(view?.dlq[0]?.event).toBe(received[0]?.body);
  });

  it('does not retry a 4xx answer other than 401, 407, 409 and 429', async () => {
    const { url, received } = await target(400);
    const local = await bus(
      `- { name: bad, pattern: { source: [crm-webhook-receiver] }, target: { url: "${url}" } }\n`,
    );
    await local.publish([changed(['x'])]);
    await local.idle();
    expect(received).toHaveLength(1);
    expect(local.view()[0]?.dlq[0]).toMatchObject({ attempts: 1, error: 'HTTP 400' });
  });

  it('retries a target that refuses connections, then dead-letters the event with that error', async () => {
    const { url } = await target(200);
    await targets.pop()?.close();
    const local = await bus(
      `- { name: gone, pattern: { source: [crm-webhook-receiver] }, target: { url: "${url}" }, retry: { attempts: 1 } }\n`,
    );

    await local.publish([changed(['x'])]);
    await local.idle();

    const [view] = local.view();
    expect(view?.failures.map((failure) => failure.error)).toEqual(['ECONNREFUSED', 'ECONNREFUSED']);
    expect(view?.dlq[0]).toMatchObject({ attempts: 2, error: 'ECONNREFUSED' });
  });

  it('sends queue targets to a queue on the local SQS emulator', async () => {
    const sqs = await startLocalSqs();
    try {
      const local = await bus(
        `- { name: q, pattern: ${departmentPattern}, target: { queue: dept } }\n`,
        {},
        {
          sqs: sqs.client,
        },
      );
      await local.publish([changed(['department'])]);
      await local.idle();
      const { Messages = [] } = await sqs.client.send(
        new ReceiveMessageCommand({
          QueueUrl: `${sqs.endpoint}/123456789012/crm-webhook-receiver-local-dept`,
          WaitTimeSeconds: 1,
        }),
      );
      expect(Messages).toHaveLength(1);
      expect(JSON.parse(Messages[0]?.Body ?? '{}').detail.significantChanges).toEqual(['department']);
      expect(local.view()[0]).toMatchObject({ matched: 1, delivered: 1 });
    } finally {
      await sqs.close();
    }
  });

  it('says at start that lambda targets are not delivered, and refuses an auth variable that is not set', async () => {
    const local = await bus(
      '- { name: fn, pattern: { source: [x] }, target: { lambda: "arn:aws:lambda:eu-west-1:123456789012:function:f" } }\n',
    );
    expect(local.notices).toEqual([
      'subscription "fn": lambda targets are delivered on AWS only; the local bus counts its matches',
    ]);
    await expect(
      bus(
        '- { name: a, pattern: { source: [x] }, target: { url: "http://localhost/x" }, auth: { header: X-Key, parameter: /k, env: NOT_SET } }\n',
      ),
    ).rejects.toThrow('subscription "a": set NOT_SET, the value of its X-Key header locally');
  });
});

describe('local bus: the receiver’s lifecycle events (lib/reconcile/records/lifecycle.ts)', () => {
  it('delivers one to a subscription of its type; the views name it by its context, having no EventId', async () => {
    const { url, received } = await target(200);
    const local = await bus(
      `- { name: recon, pattern: { detail-type: [receiver.reconcile.completed] }, target: { url: "${url}" } }\n`,
    );
    const detail = {
      context: 'Cust1',
      reason: 'manual',
      from: '2026-11-27T10:00:00Z',
      to: '2026-11-27T11:00:00Z',
      entities: ['contact'],
      notReconciled: {},
      rowsListed: 3,
      rowsChanged: 1,
      rowsDeleted: 0,
      apiCalls: 2,
      durationMs: 120,
    };
    await local.publish([lifecycleEntry('receiver.reconcile.completed', detail), changed(['department'])]);
    await local.idle();
    expect(received).toHaveLength(1);
    expect(JSON.parse(received[0]!.body)).toMatchObject({
      'detail-type': 'receiver.reconcile.completed',
      source: 'crm-webhook-receiver',
      detail,
    });
    const [view] = local.view();
    expect(view?.recent).toEqual([
      expect.objectContaining({
        detailType: 'receiver.reconcile.completed',
        eventId: undefined,
        context: 'Cust1',
      }),
    ]);
  });
});
