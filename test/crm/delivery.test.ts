import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { validEvent } from '../../lib/events/index.js';
import type { CrmCore } from '../../tools/crm/crm.js';
import { signBody } from '../../tools/samples.js';
import { crmOnTempDir, settle, startTarget, until } from './support.js';

const cleanups: Array<() => unknown> = [];
beforeEach(() => {
  // Only the clock the delivery cycle uses; sockets keep running on the real event loop.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: new Date('2026-11-27T12:00:00Z') });
});
afterEach(async () => {
  vi.useRealTimers();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A CRM with webhook 1 (contact events) and webhook 2 (webhook 1's state events), both on `answer`'s target. */
async function setup(answer: (event: string) => number) {
  const target = await startTarget((request) => answer(String(request.headers['x-superoffice-event'])));
  const crm = crmOnTempDir();
  cleanups.push(crm.cleanup, target.close);
  const core = crm.core;
  const hook = await core.register('Cust1', {
    name: 'rows',
    events: ['contact.created', 'contact.changed'],
    targetUrl: target.url,
    secret: 'shh',
  });
  const watcher = await core.register('Cust1', {
    name: 'state',
    events: ['webhook1.errors', 'webhook1.stopped', 'webhook1.started'],
    targetUrl: target.url,
    headers: { 'X-Receiver-Token': 'tok' },
  });
  const data = core.store.context('Cust1');
  return { target, core, hook, watcher, data };
}

/** Every delivery cycle to its end, each pause passing on the fake clock. */
const finish = (core: CrmCore) =>
  settle(
    core,
    () => vi.advanceTimersToNextTimerAsync(),
    () => vi.getTimerCount(),
  );

const changeContact = (core: CrmCore, id: number) =>
  core.change('Cust1', { op: 'change', table: 'contact', id, fields: { department: `D${Date.now()}` } });

describe('the CRM simulator delivers with the real sender policy', () => {
  it('tries an event 3 times, at once, 1 s after the first failure and 4 s after the second, then discards it', async () => {
    const { target, core, hook, data } = await setup(() => 503);
    core.change('Cust1', { op: 'create', table: 'contact', id: 42 });
    await until(() => hook.totalCalls === 1);
    const first = target.received[0]!;

    await vi.advanceTimersByTimeAsync(999);
    expect(hook.totalCalls).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    await until(() => hook.totalCalls === 2);
    await vi.advanceTimersByTimeAsync(3999);
    expect(hook.totalCalls).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    await until(() => hook.totalCalls === 3);
    await finish(core);

    expect(target.received.map((request) => request.at - first.at)).toEqual([0, 1000, 5000]);
    expect(target.received.map((request) => request.headers['x-superoffice-retry'])).toEqual([
      undefined,
      '1',
      '2',
    ]);
    expect(new Set(target.received.map((request) => request.body.EventId)).size).toBe(1);
    expect(target.received.every((request) => request.raw === first.raw)).toBe(true);
    expect(first.headers['x-superoffice-signature']).toBe(signBody(first.raw, 'shh'));
    expect(hook).toMatchObject({ state: 'Active', consecutiveErrors: 3, totalErrors: 3, discarded: 1 });
    expect(hook.lastError).toMatch(/contact\.created .*: HTTP 503$/);
    expect(data.discarded).toBe(1);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(target.received).toHaveLength(3);
  });

  it('counts only 200: a 202 and a 204 are failures, a 200 resets the consecutive count', async () => {
    const answers = [202, 204, 200];
    const { core, hook } = await setup(() => answers.shift() ?? 200);
    core.change('Cust1', { op: 'create', table: 'contact', id: 42 });
    await until(() => hook.totalCalls === 1);
    await vi.advanceTimersByTimeAsync(1000);
    await until(() => hook.totalCalls === 2);
    expect(hook.consecutiveErrors).toBe(2);
    await vi.advanceTimersByTimeAsync(4000);
    await finish(core);
    expect(hook).toMatchObject({ totalCalls: 3, totalErrors: 2, consecutiveErrors: 0, discarded: 0 });
  });

  it('sets the webhook to TooManyErrors at the 9th failure in a row, tells its watcher, and sends it nothing more', async () => {
    const { target, core, hook, watcher, data } = await setup((event) =>
      event.startsWith('webhook') ? 200 : 500,
    );
    for (const id of [1, 2, 3]) core.change('Cust1', { op: 'create', table: 'contact', id });
    await until(() => hook.totalCalls === 3);
    await vi.advanceTimersByTimeAsync(1000);
    await until(() => hook.totalCalls === 6);
    expect(hook.state).toBe('Active');
    await vi.advanceTimersByTimeAsync(4000);
    await finish(core);

    expect(hook).toMatchObject({
      state: 'TooManyErrors',
      consecutiveErrors: 9,
      discarded: 3,
      updatedAssociateId: 0,
    });
    const [errors] = target.of('webhook1.errors');
    expect(errors?.body).toMatchObject({
      Event: 'webhook.errors',
      PrimaryKey: 1,
      WebhookName: 'state',
      Changes: [],
      ChangedByAssociateId: 0,
      FieldValues: { state: 2, events: 3, updated_associate_id: 0 },
    });
    expect(validEvent(errors?.body)).toBeDefined();
    expect(errors?.headers['x-superoffice-signature']).toBeUndefined();
    expect(errors?.headers['x-receiver-token']).toBe('tok');
    expect(watcher.state).toBe('Active');

    const posted = target.received.length;
    expect(changeContact(core, 1).webhooks).toBe(0);
    await finish(core);
    expect(target.received).toHaveLength(posted);
    expect(data.discarded).toBe(3);
    expect(hook.notSent).toBe(1);
  });

  it('sets the webhook to TooManyErrors at once on 410 Gone, after one attempt', async () => {
    const { target, core, hook } = await setup((event) => (event === 'contact.created' ? 410 : 200));
    core.change('Cust1', { op: 'create', table: 'contact', id: 42 });
    await finish(core);
    expect(target.of('contact.created')).toHaveLength(1);
    expect(hook).toMatchObject({ state: 'TooManyErrors', consecutiveErrors: 1, discarded: 1 });
    expect(target.of('webhook1.errors')).toHaveLength(1);
  });

  it('counts a target that never answers as a failure when the attempt times out', async () => {
    vi.useRealTimers();
    const { createServer } = await import('node:net');
    const sockets = new Set<import('node:net').Socket>();
    const silent = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => silent.close(resolve));
    });
    const crm = crmOnTempDir({ timeoutMs: 50, retryDelaysMs: [1, 1] });
    cleanups.push(crm.cleanup);
    const port = (silent.address() as { port: number }).port;
    const hook = await crm.core.register('Cust1', {
      name: 'rows',
      events: ['contact.created'],
      targetUrl: `http://127.0.0.1:${port}/webhook`,
    });
    crm.core.change('Cust1', { op: 'create', table: 'contact', id: 42 });
    await crm.core.dispatcher.idle();
    expect(hook).toMatchObject({ totalCalls: 3, totalErrors: 3, discarded: 1 });
    expect(hook.lastError).toMatch(/no answer$/);
  });

  it('stops and starts a webhook: state events to its watcher; Active only after the test delivery got 200', async () => {
    let testAnswer = 500;
    const { target, core, hook } = await setup((event) => (event === 'test' ? testAnswer : 200));
    core.change('Cust1', { op: 'create', table: 'contact', id: 1 });
    await core.setState('Cust1', 1, 'Stopped', 9);
    await finish(core);
    expect(target.of('webhook1.stopped')[0]?.body.FieldValues).toMatchObject({
      state: 1,
      updated_associate_id: 9,
    });
    expect(changeContact(core, 1).webhooks).toBe(0);

    await expect(core.setState('Cust1', 1, 'Active')).rejects.toThrow(
      /answered the test delivery with 500, not 200/,
    );
    expect(hook.state).toBe('Stopped');
    const [test] = target.of('test');
    expect(test?.body).toMatchObject({ Event: 'test', Entity: 'test', PrimaryKey: 0 });
    expect(test?.headers['x-hook-test']).toBe('true');

    testAnswer = 200;
    await core.setState('Cust1', 1, 'Active');
    await finish(core);
    expect(hook.state).toBe('Active');
    expect(target.of('webhook1.started')[0]?.body.FieldValues).toMatchObject({ state: 0 });
    for (const request of target.received.filter((r) => r.body.Event !== 'test'))
      expect(validEvent(request.body), request.raw).toBeDefined();
  });
});

describe('the same re-activation twice at once', () => {
  it('sends one test delivery and one started event', async () => {
    vi.useRealTimers();
    const target = await startTarget();
    const crm = crmOnTempDir();
    try {
      await crm.core.register('Cust1', { name: 'rows', events: ['contact.created'], targetUrl: target.url });
      await crm.core.register('Cust1', {
        name: 'state',
        events: ['webhook1.started'],
        targetUrl: target.url,
      });
      await crm.core.setState('Cust1', 1, 'Stopped');
      const both = await Promise.all([
        crm.core.setState('Cust1', 1, 'Active'),
        crm.core.setState('Cust1', 1, 'Active'),
      ]);
      await crm.core.dispatcher.idle();
      expect(both.map((webhook) => webhook.state)).toEqual(['Active', 'Active']);
      expect(target.of('test')).toHaveLength(1);
      expect(target.of('webhook1.started')).toHaveLength(1);
    } finally {
      crm.cleanup();
      await target.close();
    }
  });
});

describe('a target that answers forever', () => {
  it('counts its 200 at the status line and holds none of the endless body', async () => {
    const { createServer } = await import('node:http');
    const server = createServer((req, res) => {
      req.resume();
      res.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const crm = crmOnTempDir({ timeoutMs: 1000 });
    try {
      const hook = await crm.core.register('Cust1', {
        name: 'rows',
        events: ['contact.created'],
        targetUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}/webhook`,
      });
      crm.core.change('Cust1', { op: 'create', table: 'contact', id: 1 });
      await crm.core.dispatcher.idle();
      expect(hook).toMatchObject({ totalCalls: 1, totalErrors: 0, discarded: 0 });
    } finally {
      crm.cleanup();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
