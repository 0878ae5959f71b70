import { execFileSync, spawnSync } from 'node:child_process';

/** True when valgrind can be run (`apt-get install valgrind`). */
export function hasValgrind(): boolean {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Instructions valgrind (callgrind) counts for one run of Node with `args`, single-threaded so that
 * the garbage collector and the compiler count on the main thread too, with fixed seeds. Unlike
 * times, the count does not move with the machine's load (repeated runs agree within 0.01 %).
 */
export function countInstructions(args: readonly string[], env: NodeJS.ProcessEnv = process.env): number {
  const result = spawnSync(
    'valgrind',
    [
      '--tool=callgrind',
      '--callgrind-out-file=/dev/null',
      process.execPath,
      '--single-threaded',
      // Fixed seeds: V8's hash tables and Math.random then do the same work on every run.
      '--hash-seed=1',
      '--random-seed=1',
      ...args,
    ],
    { encoding: 'utf8', env },
  );
  if (result.status !== 0)
    throw new Error(`valgrind run failed (${args.join(' ')}): ${result.stderr.slice(-800)}`);
  const match = /Collected : (\d+)/.exec(result.stderr);
  if (match === null) throw new Error(`valgrind gave no count: ${result.stderr.slice(-500)}`);
  return Number(match[1]);
}
