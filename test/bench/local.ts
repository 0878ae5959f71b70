import { runLoad } from './load.js';

/**
 * The local end-to-end rate: `npm start` in a child process, `simulate` with 50 concurrent senders
 * (shuffled, with duplicates), events per second from the first POST to the last row written and the
 * POST latency; next to the emulators' own raw rates (SQS SendMessage/s, dynalite PutItem/s) measured
 * against the same emulators in the same run, with the same concurrency. `load` is the same run at
 * 20,000 events.
 */
export async function benchLocal(
  options: { events?: number; rows?: number } = {},
): Promise<Record<string, number | string>> {
  const run = await runLoad({
    events: options.events ?? 2000,
    rows: options.rows ?? 200,
    duplicates: 2,
    seed: 7,
  });
  const { report } = run;
  return {
    'npm start → ready (ms, spawn to ready line)': run.readyMs,
    'ready line (ms, process start to ready)': run.readyLineMs ?? 'n/a',
    'simulate events / rows / deliveries': `${report.events} / ${report.rows} / ${report.deliveries}`,
    'simulate accepted / retried / discarded': `${report.accepted} / ${report.retried} / ${report.discarded}`,
    'simulate mismatches': report.mismatches,
    'local e2e events/s (POST → row written)': report.eventsPerSecond,
    'local POSTs/s while sending (50 senders)': report.postsPerSecond,
    'local POST latency p50 (ms)': report.p50Ms,
    'local POST latency p99 (ms)': report.p99Ms,
    'local send + drain (s)': `${(report.sendMs / 1000).toFixed(1)} + ${(report.drainMs / 1000).toFixed(1)}`,
    'raw local-aws-sqs SendMessage/s (50 conc.)': run.rawSqsSendPerSecond,
    'raw dynalite PutItem/s (50 conc.)': run.rawDynamoPutPerSecond,
    'e2e events/s ÷ raw PutItem/s':
      Math.round((report.eventsPerSecond / run.rawDynamoPutPerSecond) * 1000) / 1000,
  };
}
