import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import * as z from 'zod';
import { loadFunctions } from '../../infra/functions.js';
import { SCHEDULE_RATES } from '../../infra/schedules.js';
import { loadServerless, SERVERLESS_YML } from '../../infra/serverless-file.js';
import { createLambdaContext } from './lambda-context.js';

/**
 * The `schedule` events of serverless.yml, run by the local runtime as EventBridge Scheduler rules run
 * them on AWS: each enabled schedule invokes its function every `rate(...)` with a "Scheduled Event".
 * Locally `rate(N seconds)` is accepted too (AWS's rates start at 1 minute), so a poll can run quicker
 * here. A run still going when the next is due is not doubled: the tick is skipped and said once.
 */
export interface LocalSchedule {
  functionName: string;
  /** As written, e.g. `rate(5 minutes)`. */
  rate: string;
  everyMs: number;
  /** The schedule's `input`: the whole event instead of the Scheduled Event, as on AWS. */
  input?: unknown;
  timeoutMs: number;
}

const UNITS: Record<string, number> = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000 };

const ScheduleSchema = z.union([
  z.string(),
  z.object({
    rate: z.union([z.string(), z.array(z.string())]),
    enabled: z.union([z.boolean(), z.string()]).optional(),
    input: z.unknown().optional(),
  }),
]);
/** The part of serverless.yml the schedules need; each function's timeout comes from loadFunctions. */
const SchedulesSchema = z.object({
  params: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
  custom: z.record(z.string(), z.unknown()).optional(),
  functions: z.record(
    z.string(),
    z
      .object({ events: z.array(z.object({ schedule: ScheduleSchema.optional() }).loose()).optional() })
      .loose(),
  ),
});

/**
 * The schedules of serverless.yml (or the file at `path`): `${param:x}` takes the default stage's
 * value and `${self:custom.x}` the custom section's, as the local runtime's functions do, and
 * `${file(infra/schedules.cjs):x}` the rate infra/schedules.ts gives the function `x`. A rate it
 * cannot run is an error naming the function and what is accepted.
 */
export function loadSchedules(path: string | URL = SERVERLESS_YML): LocalSchedule[] {
  const config = SchedulesSchema.parse(loadServerless(path));
  const timeouts = new Map(loadFunctions(path).map((fn) => [fn.name, fn.timeoutMs]));
  const sources: Record<string, Record<string, unknown> | undefined> = {
    param: config.params?.default,
    'self:custom': config.custom,
    'file(infra/schedules.cjs)': SCHEDULE_RATES,
  };
  const resolve = (value: string | boolean): string =>
    String(value).replace(
      /\$\{(param|self:custom|file\(infra\/schedules\.cjs\))[:.]([\w.]+)\}/g,
      (_, kind: string, key: string) => String(sources[kind]?.[key] ?? ''),
    );
  return Object.entries(config.functions).flatMap(([functionName, fn]) =>
    (fn.events ?? []).flatMap((event): LocalSchedule[] => {
      if (event.schedule === undefined) return [];
      const schedule = typeof event.schedule === 'string' ? { rate: event.schedule } : event.schedule;
      if ('enabled' in schedule && resolve(schedule.enabled ?? true) === 'false') return [];
      return [schedule.rate].flat().map((written) => {
        const rate = resolve(written);
        return {
          functionName,
          rate,
          everyMs: rateMs(functionName, rate),
          ...('input' in schedule && schedule.input !== undefined && { input: schedule.input }),
          timeoutMs: timeouts.get(functionName) ?? 6000,
        };
      });
    }),
  );
}

/** `rate(5 minutes)`, `rate(1 hour)`, `rate(30 seconds)` (local only) in milliseconds. */
export function rateMs(functionName: string, rate: string): number {
  const match = /^rate\(\s*(\d+)\s+(second|minute|hour|day)s?\s*\)$/.exec(rate.trim());
  const value = Number(match?.[1]);
  if (!match || !Number.isSafeInteger(value) || value < 1)
    throw new Error(
      `serverless.yml: ${functionName}'s schedule ${rate} cannot run locally: rate(N seconds|minutes|hours|days), N a positive whole number, accepted (cron() is not)`,
    );
  return value * UNITS[match[2]!]!;
}

export interface ScheduleRunner {
  /** Invocations started so far, per function. */
  readonly runs: ReadonlyMap<string, number>;
  /** No more ticks; aborts the runs under way (their contexts' `abortSignal`) and resolves once they end. */
  stop(): Promise<void>;
}

type ScheduledHandler = (event: unknown, context: Context) => unknown;

/**
 * Invokes each schedule's handler at the start and then every `everyMs`, with EventBridge's Scheduled
 * Event (or the schedule's `input`) and a Lambda context of the function's timeout. At the start, not
 * one period later as a new rule would: on AWS the rule went on ticking while the receiver was away,
 * so a restarted runtime must not wait a period before it polls the CRM again (the convergence goal:
 * within 60 s of the receiver's return). An error is logged with the function's name; the next tick
 * runs as usual.
 */
export function startSchedules(options: {
  schedules: readonly LocalSchedule[];
  handlers: ReadonlyMap<string, unknown>;
  region: string;
  log: (line: string) => void;
}): ScheduleRunner {
  const { schedules, handlers, region, log } = options;
  const runs = new Map<string, number>();
  const running = new Set<Promise<void>>();
  // Aborted by stop(): the runs under way end their CRM calls instead of waiting them out.
  const abort = new AbortController();
  let stopped = false;
  const timers = schedules.map((schedule) => {
    const handler = handlers.get(schedule.functionName);
    if (typeof handler !== 'function')
      throw new Error(`${schedule.functionName} has a schedule but no handler was loaded for it`);
    let current: Promise<void> | undefined;
    let skipped = false;
    const tick = () => {
      if (stopped) return;
      if (current !== undefined) {
        if (!skipped) log(`[${schedule.functionName}] ${schedule.rate}: still running, tick skipped`);
        skipped = true;
        return;
      }
      runs.set(schedule.functionName, (runs.get(schedule.functionName) ?? 0) + 1);
      const run = invoke(handler as ScheduledHandler, schedule, region, abort.signal)
        .catch((error: unknown) =>
          log(`[${schedule.functionName}] ${error instanceof Error ? error.stack : String(error)}`),
        )
        .finally(() => {
          running.delete(run);
          current = undefined;
          skipped = false;
        });
      current = run;
      running.add(run);
    };
    setImmediate(tick);
    return setInterval(tick, schedule.everyMs);
  });
  return {
    runs,
    async stop() {
      stopped = true;
      for (const timer of timers) clearInterval(timer);
      abort.abort();
      await Promise.allSettled([...running]);
    },
  };
}

async function invoke(
  handler: ScheduledHandler,
  schedule: LocalSchedule,
  region: string,
  signal: AbortSignal,
): Promise<void> {
  const account = '123456789012';
  const event = {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account,
    time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region,
    resources: [`arn:aws:events:${region}:${account}:rule/local-${schedule.functionName}`],
    detail: {},
  };
  const context = createLambdaContext({
    functionName: schedule.functionName,
    timeoutMs: schedule.timeoutMs,
    region,
    signal,
  });
  await handler(schedule.input ?? event, context);
}
