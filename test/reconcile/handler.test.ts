import type { Context, SQSRecord } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { createReconcileHandler } from '../../lib/reconcile/run/reconcile-handler.js';
import type { ReconcileDeps } from '../../lib/reconcile/run/run.js';
import { FakePublisher } from '../support/bus.js';
import { lambdaContext, quietObservability } from '../support/workers.js';

const NOW = new Date('2026-11-28T01:00:00.000Z');

function setup() {
  const hidden: number[] = [];
  const lifecycle = new FakePublisher();
  let runs = 0;
  const observability = quietObservability();
  const handler = createReconcileHandler({
    async runDeps() {
      runs++;
      return {} as ReconcileDeps; // never reached: each case waits or fails before the run
    },
    async carryOn() {},
    async hide(_receipt, seconds) {
      hidden.push(seconds);
    },
    publisher: lifecycle,
    maxReceives: 3,
    ...observability,
    now: () => NOW,
  });
  const invoke = (body: string, receiveCount = 1) =>
    handler(
      {
        Records: [
          {
            messageId: 'm-1',
            receiptHandle: 'r-1',
            body,
            attributes: { ApproximateReceiveCount: String(receiveCount) },
          } as unknown as SQSRecord,
        ],
      },
      lambdaContext as Context,
    );
  /** One batch of the reconcile FIFO queue: [messageId, MessageGroupId (the context), request]. */
  const invokeBatch = (records: Array<[string, string, object]>) =>
    handler(
      {
        Records: records.map(([messageId, group, request]) => ({
          messageId,
          receiptHandle: `r-${messageId}`,
          body: JSON.stringify(request),
          attributes: { ApproximateReceiveCount: '1', MessageGroupId: group },
        })) as unknown as SQSRecord[],
      },
      lambdaContext as Context,
    );
  return { invoke, invokeBatch, hidden, lifecycle, observability, runs: () => runs };
}

const cursorUntil = (notBefore: string) => ({
  startedAt: NOW.toISOString(),
  to: NOW.toISOString(),
  entities: ['contact'],
  entity: 0,
  phase: 'changed',
  notBefore,
  counters: { rowsListed: 0, rowsChanged: 0, rowsDeleted: 0, apiCalls: 0, skipped: 0, invocations: 1 },
});

describe('the reconcile queue’s handler', () => {
  it('hides a message until its cursor’s notBefore (at most the 12 hours SQS allows) and runs nothing', async () => {
    const { invoke, hidden, runs } = setup();
    const request = {
      context: 'Cust1',
      reason: 'manual',
      from: NOW.toISOString(),
      requestedAt: NOW.toISOString(),
    };
    const soon = await invoke(
      JSON.stringify({ ...request, cursor: cursorUntil('2026-11-28T01:01:00.500Z') }),
    );
    const far = await invoke(JSON.stringify({ ...request, cursor: cursorUntil('2026-11-28T20:00:00.000Z') }));
    expect(soon.batchItemFailures).toEqual([{ itemIdentifier: 'm-1' }]);
    expect(far.batchItemFailures).toEqual([{ itemIdentifier: 'm-1' }]);
    expect(hidden).toEqual([61, 43_200]);
    expect(runs()).toBe(0);
  });

  it('a request that waits is no failure, even on its last attempt: no error line, no ReconcileFailed, nothing published', async () => {
    const { invoke, hidden, lifecycle, observability } = setup();
    const errors = vi.spyOn(observability.logger, 'error');
    const metrics = vi.spyOn(observability.metrics, 'addMetric');
    const request = {
      context: 'Cust1',
      reason: 'manual',
      from: NOW.toISOString(),
      requestedAt: NOW.toISOString(),
      cursor: cursorUntil('2026-11-28T01:01:00.000Z'),
    };
    const answer = await invoke(JSON.stringify(request), 3);
    expect(answer.batchItemFailures).toEqual([{ itemIdentifier: 'm-1' }]);
    expect(hidden).toEqual([60]);
    expect(errors).not.toHaveBeenCalled();
    expect(metrics).not.toHaveBeenCalled();
    expect(lifecycle.published).toEqual([]);
  });

  it('runs a larger batch one record after another: a request that waits fails the rest of its context’s group in the batch, another context goes on', async () => {
    const { invokeBatch, hidden, lifecycle, runs } = setup();
    const request = (context: string, cursor: object) => ({
      context,
      reason: 'manual',
      from: NOW.toISOString(),
      requestedAt: NOW.toISOString(),
      cursor,
    });
    // Past RECONCILE_MAX_INVOCATIONS: ended at once (receiver.reconcile.failed, the message deleted).
    const givenUp = {
      ...cursorUntil(NOW.toISOString()),
      counters: { ...cursorUntil(NOW.toISOString()).counters, invocations: 1000 },
    };
    const answer = await invokeBatch([
      ['m-1', 'Cust1', request('Cust1', cursorUntil('2026-11-28T01:01:00.000Z'))],
      ['m-2', 'Cust1', request('Cust1', givenUp)],
      ['m-3', 'Cust2', request('Cust2', givenUp)],
    ]);
    expect(answer.batchItemFailures).toEqual([{ itemIdentifier: 'm-1' }, { itemIdentifier: 'm-2' }]);
    expect(hidden).toEqual([60]);
    expect(lifecycle.details().map((detail) => detail.context)).toEqual(['Cust2']);
    expect(runs()).toBe(0);
  });

  it('fails a message that is not a request, and on its last attempt publishes receiver.reconcile.failed naming the field', async () => {
    const { invoke, lifecycle } = setup();
    expect((await invoke('not json', 1)).batchItemFailures).toHaveLength(1);
    expect((await invoke('{"context":"Cust 1","reason":"manual"}', 2)).batchItemFailures).toHaveLength(1);
    expect(lifecycle.published).toEqual([]);
    expect((await invoke('{"context":"Cust1","reason":"sometimes"}', 3)).batchItemFailures).toHaveLength(1);
    expect(lifecycle.published.map((e) => e.DetailType)).toEqual(['receiver.reconcile.failed']);
    expect(lifecycle.details()[0]).toMatchObject({
      context: 'unknown',
      error: expect.stringMatching(/^Error: the reconcile message's reason is not accepted: /),
    });
  });

  it('flushes the invocation’s metrics when its message fails (ReconcileFailed on the last attempt)', async () => {
    const { invoke, observability } = setup();
    const metrics = vi.spyOn(observability.metrics, 'addMetric');
    const flushed = vi.spyOn(observability.metrics, 'publishStoredMetrics');
    expect((await invoke('not json', 3)).batchItemFailures).toHaveLength(1);
    expect(metrics.mock.calls.map(([name]) => name)).toEqual(['ReconcileFailed']);
    expect(flushed).toHaveBeenCalledOnce();
  });

  it('refuses a cursor it did not write, in one line', async () => {
    const { invoke, lifecycle } = setup();
    const body = {
      context: 'Cust1',
      reason: 'manual',
      requestedAt: NOW.toISOString(),
      cursor: { entity: 'x' },
    };
    expect((await invoke(JSON.stringify(body), 3)).batchItemFailures).toHaveLength(1);
    expect(String(lifecycle.details()[0]?.error)).toMatch(
      /^Error: the reconcile request's cursor is not one this function wrote \(.*\): send the request again without it$/,
    );
  });
});

describe('the reconcile queue’s handler, when the bus refuses its announcement', () => {
  it('ends a completed run (no retry, no DLQ): the refusal is logged and counted as a publish failure', async () => {
    let runs = 0;
    const observability = quietObservability();
    const errors = vi.spyOn(observability.logger, 'error');
    const metrics = vi.spyOn(observability.metrics, 'addMetric');
    const handler = createReconcileHandler({
      async runDeps() {
        runs++;
        return {
          crm: { tenantState: async () => ({ running: true, state: 'Running', endpoint: undefined }) },
          stores: () => true,
          apiCalls: () => 0,
          timeLeftMs: () => 60_000,
          now: () => NOW,
          warn: () => undefined,
        } as unknown as ReconcileDeps;
      },
      async carryOn() {},
      async hide() {},
      publisher: {
        publish: async (entries) =>
          entries.map(() => ({ ok: false as const, errorCode: 'InternalFailure', errorMessage: 'refused' })),
      },
      maxReceives: 3,
      ...observability,
      now: () => NOW,
    });
    const request = {
      context: 'Cust1',
      reason: 'manual',
      from: NOW.toISOString(),
      entities: [],
      requestedAt: NOW.toISOString(),
    };
    const record = {
      messageId: 'm-1',
      receiptHandle: 'r-1',
      body: JSON.stringify(request),
      attributes: { ApproximateReceiveCount: '1' },
    };
    const answer = await handler({ Records: [record as unknown as SQSRecord] }, lambdaContext as Context);
    expect(answer.batchItemFailures).toEqual([]);
    expect(runs).toBe(1);
    expect(metrics.mock.calls.map(([name]) => name)).toEqual(['ReconcileCompleted', 'PublishFailures']);
    expect(errors.mock.calls.map(([message]) => message)).toEqual([
      'receiver.reconcile.completed not published',
    ]);
  });
});
