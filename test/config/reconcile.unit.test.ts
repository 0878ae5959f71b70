import { describe, expect, it } from 'vitest';
import { readReconcileConfig } from '../../lib/config/reconcile.js';
import { DEFAULT_DELETE_CAP, DEFAULT_RUN_BOUNDS } from '../../lib/config/reconcile-bounds.js';

const env = { RECONCILE_QUEUE_URL: 'https://sqs.example/q.fifo', RECONCILE_MAX_RECEIVE_COUNT: '5' };

describe('the reconcile function’s configuration', () => {
  it('reads its queue, the queue’s maxReceiveCount, the run’s bounds and its cap on deletes', () => {
    expect(readReconcileConfig(env)).toEqual({
      queueUrl: 'https://sqs.example/q.fifo',
      maxReceives: 5,
      bounds: DEFAULT_RUN_BOUNDS,
      maxDeletes: { rows: 10, percent: 10 },
    });
    expect(DEFAULT_DELETE_CAP).toEqual({ rows: 10, percent: 10 });
    const set = { ...env, RECONCILE_MAX_DELETES: '0', RECONCILE_MAX_DELETES_PERCENT: '100' };
    expect(readReconcileConfig(set).maxDeletes).toEqual({ rows: 0, percent: 100 });
  });

  it('refuses a wrong cap on deletes in one line naming the variable and its range', () => {
    for (const value of ['-1', '2.5', 'ten', '1000001'])
      expect(() => readReconcileConfig({ ...env, RECONCILE_MAX_DELETES: value })).toThrow(
        /^RECONCILE_MAX_DELETES must be a whole number from 0 to 1000000 \(default 10\)$/,
      );
    expect(() => readReconcileConfig({ ...env, RECONCILE_MAX_DELETES_PERCENT: '101' })).toThrow(
      /^RECONCILE_MAX_DELETES_PERCENT must be a whole number from 0 to 100 \(default 10\)$/,
    );
  });

  it('refuses a missing or wrong maxReceiveCount in one line naming the variable (no default copies the queue’s)', () => {
    for (const value of [undefined, '', '0', '2.5', 'five'])
      expect(() => readReconcileConfig({ ...env, RECONCILE_MAX_RECEIVE_COUNT: value })).toThrow(
        /^RECONCILE_MAX_RECEIVE_COUNT must/,
      );
    expect(() => readReconcileConfig({ ...env, RECONCILE_QUEUE_URL: undefined })).toThrow(
      'RECONCILE_QUEUE_URL must be set',
    );
  });
});
