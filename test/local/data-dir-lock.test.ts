import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { LOCK_FILE, lockDataDir, removeStaleLock } from '../../local/data-dir-lock.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const directories: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

const dataDir = () => {
  const directory = mkdtempSync(join(tmpdir(), 'crm-lock-'));
  directories.push(directory);
  return directory;
};

/** A real process that takes DATA_DIR with lockDataDir, as `npm start` does; resolves once it holds it. */
async function holder(directory: string): Promise<ChildProcess> {
  const script = `import { lockDataDir } from './local/data-dir-lock.ts';
lockDataDir(${JSON.stringify(directory)});
console.log('locked');
setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('locked') && resolve());
    child.once('exit', (code) => reject(new Error(`the holder exited with ${code}`)));
  });
  return child;
}

/** The process state letter Linux shows in /proc/<pid>/stat (R, S, Z...), or undefined once reaped. */
function state(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return undefined;
  }
}

/** Blocks this thread (no event loop turn, so Node cannot reap its child) until `pid` is a zombie. */
function waitForZombieWithoutReaping(pid: number): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let waited = 0; state(pid) !== 'Z'; waited += 5) {
    if (waited > 10_000) throw new Error(`process ${pid} is ${state(pid)}, not a zombie, after 10 s`);
    Atomics.wait(pause, 0, 0, 5);
  }
}

describe('lockDataDir', () => {
  it('refuses DATA_DIR while the receiver holding it runs, naming its pid', async () => {
    const directory = dataDir();
    const child = await holder(directory);
    expect(() => lockDataDir(directory)).toThrow(
      new RegExp(`^another receiver \\(pid ${child.pid}, still starting\\) holds DATA_DIR`),
    );
  });

  it('takes DATA_DIR over at once from a receiver killed with SIGKILL that is not reaped yet (a zombie)', async () => {
    const directory = dataDir();
    const child = await holder(directory);
    expect(JSON.parse(readFileSync(join(directory, LOCK_FILE), 'utf8'))).toMatchObject({ pid: child.pid });

    child.kill('SIGKILL');
    waitForZombieWithoutReaping(child.pid!);
    const lock = lockDataDir(directory);

    expect(state(child.pid!)).toBe('Z'); // still unreaped when the restart took the directory
    expect(JSON.parse(readFileSync(join(directory, LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid });
    lock.release();
  });

  it('takes DATA_DIR over from a lock whose pid another process has taken since (a reboot, a container restart)', async () => {
    const directory = dataDir();
    const child = await holder(directory);
    const lock = JSON.parse(readFileSync(join(directory, LOCK_FILE), 'utf8')) as {
      pid: number;
      start: string;
    };
    expect(lock.start).toMatch(/^\d+$/);
    child.kill('SIGKILL');
    // The lock as a receiver left it, its pid now naming this other process (which started later).
    const other = spawn('sleep', ['30']);
    children.push(other);
    writeFileSync(
      join(directory, LOCK_FILE),
      JSON.stringify({ pid: other.pid, start: String(Number(lock.start) - 1) }),
    );

    const taken = lockDataDir(directory);

    expect(JSON.parse(readFileSync(join(directory, LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid });
    taken.release();
  });

  it("two starts that both judged a dead holder's lock stale: the second leaves the first one's lock alone", async () => {
    const directory = dataDir();
    const path = join(directory, LOCK_FILE);
    const dead = await holder(directory);
    const stale = JSON.parse(readFileSync(path, 'utf8'));
    dead.kill('SIGKILL');
    await new Promise((resolve) => dead.once('exit', resolve));
    // Start A takes DATA_DIR over; start B read the same stale lock a moment before and now removes "it".
    const first = lockDataDir(directory);

    expect(removeStaleLock(path, stale, process.pid + 1)).toBe(false);

    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ pid: process.pid });
    first.release();
  });
});
