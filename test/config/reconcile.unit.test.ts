import { describe, expect, it } from 'vitest';
import { readReconcileConfig } from '../../lib/config/reconcile.js';
import { DEFAULT_RUN_BOUNDS } from '../../lib/config/reconcile-bounds.js';

const env = { RECONCILE_QUEUE_URL: 'https://sqs.example/q.fifo', RECONCILE_MAX_RECEIVE_COUNT: '5' };

describe('the reconcile function’s configuration', () => {
  it('reads its queue, the queue’s maxReceiveCount and the run’s bounds', () => {
    expect(readReconcileConfig(env)).toEqual({
      queueUrl: 'https://sqs.example/q.fifo',
      maxReceives: 5,
      bounds: DEFAULT_RUN_BOUNDS,
    });
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
