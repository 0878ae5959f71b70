import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEDULE_RATES } from '../../infra/schedules.js';
import { SCHEDULE_MS } from '../../lib/reconcile/poll/schedule.js';
import { loadSchedules, rateMs, type ScheduleRunner, startSchedules } from '../../local/lambda/schedules.js';

/**
 * serverless.yml's `schedule` events in the local runtime, proven with a real function module (its
 * handler file written here, imported as the runtime imports a function's) on a 1-second rate.
 */
let dir: string;
let serverlessPath: string;
const runners: ScheduleRunner[] = [];

const SERVERLESS = `
service: x
params:
  default:
    pollSeconds: 1
custom:
  slowRate: rate(1 second)
provider:
  name: aws
  timeout: 9
functions:
  tick:
    handler: tick.handler
    timeout: 3
    events:
      - schedule: rate(\${param:pollSeconds} second)
  slow:
    handler: slow.handler
    events:
      - schedule:
          rate:
            - \${self:custom.slowRate}
          input: { say: slow }
  minutely:
    handler: minutely.handler
    events:
      - schedule: rate(1 minute)
  hang:
    handler: hang.handler
    events:
      - schedule: rate(1 minute)
  off:
    handler: tick.handler
    events:
      - schedule: { rate: rate(1 minute), enabled: false }
  plain:
    handler: tick.handler
    events:
      - sqs: { arn: { "Fn::GetAtt": [ContactQueue, Arn] } }
`;

const TICK = `
export const handler = async (event, context) => {
  (globalThis.__ticks ??= []).push({ event, remainingMs: context.getRemainingTimeInMillis(), name: context.functionName });
};
`;
const MINUTELY = `
export const handler = async (event) => {
  (globalThis.__minutely ??= []).push(event);
};
`;
const SLOW = `
export const handler = async (event) => {
  (globalThis.__slow ??= []).push(event);
  await new Promise((release) => { globalThis.__releaseSlow = release; });
};
`;

/** A run that ends only when its context's abortSignal says the runtime stops (a CRM call that never answers). */
const HANG = `
export const handler = async (event, context) => {
  globalThis.__hanging = true;
  await new Promise((resolve) => context.abortSignal?.addEventListener('abort', resolve));
};
`;

type Globals = {
  __hanging?: boolean;
  __ticks?: Array<{ event: Record<string, unknown>; remainingMs: number; name: string }>;
  __slow?: unknown[];
  __minutely?: unknown[];
  __releaseSlow?: () => void;
};
const globals = globalThis as Globals;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'crm-schedules-'));
  serverlessPath = join(dir, 'serverless.yml');
  writeFileSync(serverlessPath, SERVERLESS);
  writeFileSync(join(dir, 'tick.mjs'), TICK);
  writeFileSync(join(dir, 'slow.mjs'), SLOW);
  writeFileSync(join(dir, 'minutely.mjs'), MINUTELY);
  writeFileSync(join(dir, 'hang.mjs'), HANG);
});
afterAll(async () => {
  globals.__releaseSlow?.();
  await Promise.all(runners.map((runner) => runner.stop()));
  rmSync(dir, { recursive: true, force: true });
});

async function handler(file: string): Promise<unknown> {
  return ((await import(pathToFileURL(join(dir, file)).href)) as { handler: unknown }).handler;
}

/** Starts the schedules of the function `name` of the test's serverless.yml, its handler from `file`. */
async function start(name: string, file: string, log: (line: string) => void = () => undefined) {
  const runner = startSchedules({
    schedules: loadSchedules(serverlessPath).filter((schedule) => schedule.functionName === name),
    handlers: new Map([[name, await handler(file)]]),
    region: 'eu-west-1',
    log,
  });
  runners.push(runner);
  return runner;
}

describe('loadSchedules', () => {
  it('reads every enabled schedule, its rate resolved from params and custom, its input and timeout', () => {
    expect(loadSchedules(serverlessPath)).toEqual([
      { functionName: 'tick', rate: 'rate(1 second)', everyMs: 1000, timeoutMs: 3000 },
      {
        functionName: 'slow',
        rate: 'rate(1 second)',
        everyMs: 1000,
        input: { say: 'slow' },
        timeoutMs: 9000,
      },
      { functionName: 'minutely', rate: 'rate(1 minute)', everyMs: 60_000, timeoutMs: 9000 },
      { functionName: 'hang', rate: 'rate(1 minute)', everyMs: 60_000, timeoutMs: 9000 },
    ]);
  });

  it('the poll every minute its code is written for (SCHEDULE_MS), from infra/schedules.ts as serverless.yml has it', () => {
    const [poll] = loadSchedules().filter((schedule) => schedule.functionName === 'reconcilePoll');
    expect(poll).toMatchObject({ rate: 'rate(1 minute)', everyMs: SCHEDULE_MS });
    expect(SCHEDULE_RATES.reconcilePoll).toBe('rate(1 minute)');
  });

  it('rates as AWS writes them, and seconds for local use; anything else names the function', () => {
    expect(rateMs('f', 'rate(1 minute)')).toBe(60_000);
    expect(rateMs('f', 'rate(5 minutes)')).toBe(300_000);
    expect(rateMs('f', 'rate(2 hours)')).toBe(7_200_000);
    expect(rateMs('f', 'rate(1 day)')).toBe(86_400_000);
    expect(rateMs('f', 'rate(10 seconds)')).toBe(10_000);
    for (const rate of [
      'cron(0 * * * ? *)',
      'rate(0 minutes)',
      'rate(1.5 minutes)',
      'rate(5 weeks)',
      'rate()',
    ])
      expect(() => rateMs('reconcilePoll', rate), rate).toThrow(
        `serverless.yml: reconcilePoll's schedule ${rate} cannot run locally: rate(N seconds|minutes|hours|days)`,
      );
  });
});

describe('startSchedules', () => {
  it('invokes a real function every period with a Scheduled Event and a context of its timeout, until stopped', async () => {
    const runner = await start('tick', 'tick.mjs');
    await expect
      .poll(() => globals.__ticks?.length ?? 0, { timeout: 15_000, interval: 100 })
      .toBeGreaterThanOrEqual(2);
    await runner.stop();
    const [first] = globals.__ticks!;
    expect(first).toMatchObject({
      name: 'tick',
      event: {
        'detail-type': 'Scheduled Event',
        source: 'aws.events',
        region: 'eu-west-1',
        resources: ['arn:aws:events:eu-west-1:123456789012:rule/local-tick'],
        detail: {},
      },
    });
    expect(first!.remainingMs).toBeGreaterThan(0);
    expect(first!.remainingMs).toBeLessThanOrEqual(3000);
    const stopped = globals.__ticks!.length;
    expect(runner.runs.get('tick')).toBe(stopped);
    // Stopped: two more periods go by without a run.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(globals.__ticks).toHaveLength(stopped);
  });

  it('never runs a function twice at once: a tick due while it runs is skipped and said once', async () => {
    const lines: string[] = [];
    const runner = await start('slow', 'slow.mjs', (line) => lines.push(line));
    await expect.poll(() => lines.length, { timeout: 15_000, interval: 100 }).toBeGreaterThanOrEqual(1);
    // Its input is the whole event, as on AWS.
    expect(globals.__slow).toEqual([{ say: 'slow' }]);
    expect(lines).toEqual(['[slow] rate(1 second): still running, tick skipped']);
    const release = globals.__releaseSlow!;
    release();
    await expect.poll(() => globals.__slow?.length ?? 0, { timeout: 15_000, interval: 100 }).toBe(2);
    globals.__releaseSlow!();
    await runner.stop();
  });

  it('runs a schedule at the start, not one period later: a restarted runtime polls at once, as the rule on AWS went on ticking', async () => {
    const runner = await start('minutely', 'minutely.mjs');
    await expect.poll(() => globals.__minutely?.length ?? 0, { timeout: 10_000, interval: 50 }).toBe(1);
    await runner.stop();
    expect(runner.runs.get('minutely')).toBe(1);
  });

  it('stop aborts the runs under way through their context’s abortSignal, and waits only for them to end', async () => {
    const runner = await start('hang', 'hang.mjs');
    await expect.poll(() => globals.__hanging, { timeout: 10_000, interval: 50 }).toBe(true);
    const started = performance.now();
    await runner.stop();
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('refuses a schedule whose function has no handler, naming it', () => {
    expect(() =>
      startSchedules({
        schedules: loadSchedules(serverlessPath),
        handlers: new Map(),
        region: 'eu-west-1',
        log: () => undefined,
      }),
    ).toThrow('tick has a schedule but no handler was loaded for it');
  });
});
