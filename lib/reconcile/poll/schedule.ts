import { setTimeout as sleep } from 'node:timers/promises';
import { type PollDeps, type PollReport, pollWebhooks } from './poll.js';

/**
 * How often the schedule invokes the poll function: AWS schedules have a granularity of one minute,
 * so RECONCILE_POLL_SECONDS is honoured inside the function: each invocation polls when an interval
 * is due (one conditional write decides, {@link pollWebhooks}), and, under 60 s, again every interval
 * while its minute lasts.
 */
export const SCHEDULE_MS = 60_000;

export interface ScheduleOptions {
  /** Milliseconds the invocation may still run (the Lambda's remaining time less a reserve). */
  timeLeftMs: () => number;
  /** Ends the invocation early (the local runtime stopping): no further poll, no wait for one. */
  signal?: AbortSignal | undefined;
  wait?: (ms: number) => Promise<unknown>;
}

/**
 * The polls of one scheduled invocation: one, or under a minute's interval as many as fit in the
 * minute before the next invocation, each started only with a whole interval of time left (its CRM
 * calls are bounded by the same budget).
 */
export async function runScheduledPolls(deps: PollDeps, options: ScheduleOptions): Promise<PollReport[]> {
  const now = deps.now ?? Date.now;
  const { signal } = options;
  const wait = options.wait ?? ((ms: number) => sleep(ms, undefined, { signal }).catch(() => undefined));
  const intervalMs = deps.config.pollSeconds * 1000;
  const started = now();
  const reports = [await pollWebhooks(deps)];
  for (;;) {
    const next = started + reports.length * intervalMs;
    if (next >= started + SCHEDULE_MS || options.timeLeftMs() - (next - now()) < intervalMs) return reports;
    await wait(next - now());
    if (signal?.aborted) return reports;
    reports.push(await pollWebhooks(deps));
  }
}
