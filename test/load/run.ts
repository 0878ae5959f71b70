/**
 * `npm run test:load`: the load run as an assertion. `npm start` in a child process, 20,000
 * events over 2,000 rows with 10 % duplicates, shuffled, 50 concurrent senders; exits 1 unless every
 * delivery was accepted, none discarded or dead-lettered, the queues drained and every row matches.
 * Not part of `npm test` (it takes a few minutes); LOAD_EVENTS / LOAD_ROWS shrink it for a quick try.
 */
import { formatReport } from '../../tools/simulate-report.js';
import { cpuRatioCeiling, ratio, ratioCeiling, runLoad } from '../bench/load.js';

const size = (name: string): number | undefined => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
};

const run = await runLoad({
  events: size('LOAD_EVENTS'),
  rows: size('LOAD_ROWS'),
  log: (line) => console.log(line),
});
console.log(formatReport(run.report));
console.log(
  `raw rates in the same run: local-aws-sqs ${run.rawSqsSendPerSecond} SendMessage/s, ` +
    `dynalite ${run.rawDynamoPutPerSecond} PutItem/s (events/s ÷ puts/s ${ratio(run)}, ceiling on this ` +
    `machine's cores ${ratioCeiling(run)}, by CPU alone ${cpuRatioCeiling(run)}); ` +
    `runtime CPU-ms per event ${run.cpuMsPerEvent.toFixed(2)}, ` +
    `per raw put ${run.cpuMsPerPut.toFixed(2)}; whole run ${(run.totalMs / 1000).toFixed(1)} s`,
);
if (run.failures.length > 0) {
  console.error(`load test FAILED: ${run.failures.join(', ')}`);
  process.exit(1);
}
console.log('load test passed');
