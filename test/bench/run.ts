/**
 * `npm run bench`: every benchmark of the project in one run, printed as figures. Ratios compare
 * ours against a floor or the emulator's own raw rate measured in the same run, since absolute
 * times on a shared machine are noisy. Pass names to run a subset: `npm run bench -- ingest bundles`;
 * `npm run bench -- load` is the 20,000-event load of the local runtime (a few minutes; exits 1 on
 * any mismatch or discarded event).
 */
import { benchBundles } from './bundles.js';
import { benchIngestCpu, benchIngestInstructions } from './ingest.js';
import { benchLoad } from './load.js';
import { benchLocal } from './local.js';
import { benchWorkers } from './workers.js';

type Bench = () => Promise<Record<string, number | string>>;

const benches: Record<string, Bench> = {
  ingest: () => benchIngestCpu(),
  'ingest-instructions': () => benchIngestInstructions(),
  bundles: () => benchBundles(),
  workers: () => benchWorkers(),
  local: () => benchLocal(),
  load: () => benchLoad(),
};

const wanted = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
const unknown = wanted.filter((name) => !(name in benches));
if (unknown.length > 0) {
  console.error(`unknown bench ${unknown.join(', ')}; benches: ${Object.keys(benches).join(', ')}`);
  process.exit(2);
}
for (const [name, run] of Object.entries(benches)) {
  if (wanted.length > 0 && !wanted.includes(name)) continue;
  const started = performance.now();
  const figures = await run();
  console.log(`\n## ${name} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  for (const [key, value] of Object.entries(figures)) console.log(`${key.padEnd(44)} ${value}`);
}
