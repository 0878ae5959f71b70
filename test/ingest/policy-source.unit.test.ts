import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { readIngestConfig } from '../../lib/config/ingest.js';
import { createPolicySource, type ParameterReader, STALE_RETRY_MS } from '../../lib/ingest/policy.js';
import { QUEUE_ENV_VARS } from '../../lib/queue/port.js';

const config = (maxAgeSeconds: number) =>
  readIngestConfig({
    ...Object.fromEntries(Object.values(QUEUE_ENV_VARS).map((name) => [name, `http://queue/${name}`])),
    WEBHOOK_SECRETS_PARAMETER: '/stage/webhook-secrets',
    WEBHOOK_SECRETS_MAX_AGE_SECONDS: String(maxAgeSeconds),
  });

/** A parameter store whose reads answer or fail as the test says, counting them. */
function store() {
  const state = { reads: 0, fail: false, pending: [] as Array<() => void> };
  const reader: ParameterReader = {
    async get() {
      state.reads++;
      await new Promise<void>((resolve) => state.pending.push(resolve));
      if (state.fail) throw new Error('no answer within 500 ms');
      return JSON.stringify({ Cust1: ['secret-1'] });
    },
  };
  const answer = () => {
    for (const resolve of state.pending.splice(0)) resolve();
  };
  return { state, reader, answer };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

it('deliveries that arrive together share one read of the parameter', async () => {
  const { state, reader, answer } = store();
  const policy = createPolicySource(config(1), reader);
  const all = Promise.all(Array.from({ length: 20 }, () => policy()));
  await vi.waitFor(() => expect(state.pending.length).toBe(1));
  answer();
  const policies = await all;
  expect(state.reads).toBe(1);
  expect(new Set(policies).size).toBe(1);
});

it('a refresh that fails keeps the secrets read before and is not tried again before the quiet period', async () => {
  const { state, reader, answer } = store();
  const stale: unknown[] = [];
  const policy = createPolicySource(config(300), reader, (error) => stale.push(error));
  const first = policy();
  await vi.waitFor(() => expect(state.pending.length).toBe(1));
  answer();
  const known = await first;

  state.fail = true;
  const failing = policy();
  await vi.waitFor(() => expect(state.pending.length).toBe(1));
  answer();
  expect(await failing).toBe(known);
  expect(stale).toHaveLength(1);

  // Every delivery of the quiet period is answered with the secrets read before, without a read.
  const during = await Promise.all(Array.from({ length: 50 }, () => policy()));
  expect(during.every((each) => each === known)).toBe(true);
  expect(state.reads).toBe(2);
  expect(stale).toHaveLength(1);

  // Past it, the parameter is read again.
  vi.setSystemTime(Date.now() + STALE_RETRY_MS + 1);
  state.fail = false;
  const after = policy();
  await vi.waitFor(() => expect(state.pending.length).toBe(1));
  answer();
  await after;
  expect(state.reads).toBe(3);
});

it('a cold start without secrets still fails its delivery (503), and the next one reads again', async () => {
  const { state, reader, answer } = store();
  state.fail = true;
  const policy = createPolicySource(config(1), reader);
  const first = policy();
  await vi.waitFor(() => expect(state.pending.length).toBe(1));
  answer();
  await expect(first).rejects.toThrow('no answer within 500 ms');
  const second = policy();
  await vi.waitFor(() => expect(state.pending.length).toBe(1));
  answer();
  await expect(second).rejects.toThrow();
  expect(state.reads).toBe(2);
});
