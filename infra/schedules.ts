import { SCHEDULE_MS } from '../lib/reconcile/poll/schedule.js';

/**
 * The rates of serverless.yml's schedules that the code is written for, by function
 * (`${file(infra/schedules.cjs):<function>}`; the local runtime reads them here): the poll's is the
 * minute within which one invocation polls every RECONCILE_POLL_SECONDS ({@link SCHEDULE_MS}).
 */
export const SCHEDULE_RATES: Readonly<Record<string, string>> = {
  reconcilePoll: minutesRate(SCHEDULE_MS),
};

/** `rate(N minute[s])` for a whole number of minutes, as an EventBridge schedule writes it. */
function minutesRate(ms: number): string {
  const minutes = ms / 60_000;
  return `rate(${minutes} ${minutes === 1 ? 'minute' : 'minutes'})`;
}
