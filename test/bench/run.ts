/**
 * `npm run bench`: every benchmark of the project in one run, printed as figures. Ratios compare
 * ours against a floor or the emulator's own raw rate measured in the same run, since absolute
 * times on a shared machine are noisy. Pass names to run a subset: `npm run bench -- ingest bundles`;
 * `npm run bench -- load` is the 20,000-event load of the local runtime (a few minutes; exits 1 on
 * any mismatch or discarded event).
 */
import { parseCommandLine, UsageError, usageLines } from '../../tools/command-line.js';
import { benchBundles } from './bundles.js';
import { benchIngestCpu, benchIngestInstructions } from './ingest.js';
import { benchLoad } from './load.js';
import { benchLocal } from './local.js';
import { benchWorkers } from './workers.js';

type Bench = () => Promise<Record<string, number | string>>;

/** Each bench, with what it runs (said before it starts: some take minutes and print only at the end). */
const benches: Record<string, { runs: string; run: Bench }> = {
  ingest: { runs: 'the ingest handler in CPU µs per event, against its floors', run: () => benchIngestCpu() },
  'ingest-instructions': {
    runs: 'the same cases in instructions, under valgrind (skipped without it)',
    run: () => benchIngestInstructions(),
  },
  bundles: {
    runs: 'each function bundled as serverless.yml does, its size and import time in fresh processes',
    run: () => benchBundles(),
  },
  workers: { runs: 'the workers on batches against dynalite', run: () => benchWorkers() },
  local: {
    runs: 'npm start in a child process and simulate with 50 senders, next to the emulators’ raw rates',
    run: () => benchLocal(),
  },
  load: { runs: 'the 20,000-event load of npm start (a few minutes)', run: () => benchLoad() },
};

const OPTIONS = { help: { type: 'boolean', short: 'h' } } as const;
const HELP = `Usage: npm run bench -- [bench ...] [options]

Runs the benches named (default: every one) and prints their figures.

Benches:
${Object.entries(benches)
  .map(([name, { runs }]) => `  ${name.padEnd(20)} ${runs}`)
  .join('\n')}
Options:
  --help, -h           this text`;

let wanted: string[];
try {
  const { values, positionals } = parseCommandLine({
    args: process.argv.slice(2),
    allowPositionals: true,
    options: OPTIONS,
  });
  if (values.help) {
    console.log(HELP);
    process.exit(0);
  }
  const unknown = positionals.filter((name) => !(name in benches));
  if (unknown.length > 0)
    throw new UsageError(`unknown bench ${unknown.join(', ')}: it takes ${Object.keys(benches).join(', ')}`);
  wanted = positionals;
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  console.error(usageLines(error, 'bench', OPTIONS));
  process.exit(2);
}
const chosen = Object.entries(benches).filter(([name]) => wanted.length === 0 || wanted.includes(name));
console.log(
  `${chosen.length} bench${chosen.length === 1 ? '' : 'es'}: ${chosen.map(([name]) => name).join(', ')}`,
);
for (const [name, { runs, run }] of chosen) {
  console.log(`\nrunning ${name}: ${runs}…`);
  const started = performance.now();
  const figures = await run();
  console.log(`\n## ${name} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  for (const [key, value] of Object.entries(figures)) console.log(`${key.padEnd(44)} ${value}`);
}
