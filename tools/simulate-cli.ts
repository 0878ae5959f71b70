import { loadEnvFile } from '../local/env-file.js';
import { parseCommandLine, runCommand, UsageError } from './command-line.js';
import { localAdminUrl, localWebhookUrl, senderSecret } from './sender-config.js';
import { runSimulation } from './simulate.js';
import { formatReport } from './simulate-report.js';

const USAGE = `Usage: npm run simulate -- [options]

Sends a realistic stream of N events over M rows to the local receiver with a sender that behaves like
the CRM's (3 attempts, 1 s and 4 s apart, only 200 counts, 9 consecutive failures stop the webhook),
waits for the queues to drain, and checks every row through the admin API. Exits 1 on any mismatch.

Options:
  --events N           events to send (default 1000)
  --rows M             rows they change (default 100)
  --duplicates P       percent of events sent twice (0-100, default 0)
  --shuffle            send them out of order
  --concurrency C      senders at once (1-1000, default 10)
  --families F         spec (contacts and activities, the default) or all (every family of the catalogue:
                       person, sale, quote actions, list.category, y_equipment, ...)
  --url U              the receiver's /webhook (default: npm start's, from PORT and HOST)
  --admin-url A        its admin API (default: from ADMIN_PORT)
  --context C          the ContextIdentifier (default Cust12345)
  --seed S             the random seed, to repeat a run
  --json               the report as JSON
  --help, -h           this text`;

const OPTIONS = {
  events: { type: 'string', default: '1000' },
  rows: { type: 'string', default: '100' },
  duplicates: { type: 'string', default: '0' },
  shuffle: { type: 'boolean', default: false },
  concurrency: { type: 'string', default: '10' },
  url: { type: 'string' },
  'admin-url': { type: 'string' },
  context: { type: 'string' },
  seed: { type: 'string' },
  families: { type: 'string', default: 'spec' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h' },
} as const;

async function main(argv: string[]): Promise<number> {
  loadEnvFile(process.env.ENV_FILE ?? '.env');
  const { values } = parseCommandLine({ args: argv, options: OPTIONS });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const number = (name: string, raw: string | undefined, min: number, max = Number.MAX_SAFE_INTEGER) => {
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max)
      throw new UsageError(`--${name} must be an integer in ${min}..${max}`);
    return value;
  };
  const context = values.context;
  if (values.families !== 'spec' && values.families !== 'all')
    throw new UsageError('--families must be spec or all');
  // Ctrl-C: stop sending and print what was sent; a second one ends the process at once.
  const interrupt = new AbortController();
  process.once('SIGINT', () => interrupt.abort());
  const report = await runSimulation({
    signal: interrupt.signal,
    url: values.url ?? localWebhookUrl(),
    adminUrl: values['admin-url'] ?? localAdminUrl(),
    secret: senderSecret(context ?? ''),
    events: number('events', values.events, 1),
    rows: number('rows', values.rows, 1),
    duplicates: number('duplicates', values.duplicates, 0, 100),
    shuffle: values.shuffle,
    concurrency: number('concurrency', values.concurrency, 1, 1000),
    context,
    seed: values.seed === undefined ? undefined : number('seed', values.seed, 0),
    families: values.families,
    headers: process.env.STATE_EVENT_TOKEN
      ? { 'X-Receiver-Token': process.env.STATE_EVENT_TOKEN }
      : undefined,
    log: values.json ? undefined : (line) => console.log(line),
  });
  console.log(values.json ? JSON.stringify(report, null, 2) : formatReport(report));
  if (report.interrupted) return 130;
  return report.mismatches === 0 && report.drained ? 0 : 1;
}

runCommand(
  'simulate',
  OPTIONS,
  () => main(process.argv.slice(2)),
  (error) =>
    `simulate stopped: ${error instanceof Error ? error.message : String(error)} (is npm start running, and at these URLs?)`,
);
