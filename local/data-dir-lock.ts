import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StartupError } from './startup-error.js';

/** Written to DATA_DIR while a receiver runs on it. */
export const LOCK_FILE = 'receiver.lock';

interface LockContent {
  pid: number;
  ports?: { ingest: number; admin: number };
}

export interface DataDirLock {
  /** Records the ports once they are known, for the message a second start prints. */
  update(ports: { ingest: number; admin: number }): void;
  release(): void;
}

/**
 * Takes DATA_DIR for this process: LevelDB and the SQS journal allow one writer. A lock left by a
 * process that no longer runs (a `kill -9`, even one its parent has not reaped yet) is taken over; one
 * held by a running process throws a StartupError that names its pid and ports.
 */
export function lockDataDir(dataDir: string, pid = process.pid): DataDirLock {
  const path = join(dataDir, LOCK_FILE);
  const write = (content: LockContent) => writeFileSync(path, `${JSON.stringify(content)}\n`, { flag: 'w' });
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(path, `${JSON.stringify({ pid })}\n`, { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw busy(error, path, dataDir);
      const holder = readLock(path);
      if (holder && holder.pid !== pid && isRunning(holder.pid)) throw busy(holder, path, dataDir);
      rmSync(path, { force: true }); // stale: its process is gone
    }
  }
  let released = false;
  return {
    update: (ports) => write({ pid, ports }),
    release() {
      if (released) return;
      released = true;
      if (readLock(path)?.pid === pid) rmSync(path, { force: true });
    },
  };
}

function busy(holder: LockContent | unknown, path: string, dataDir: string): Error {
  const content =
    holder && typeof holder === 'object' && 'pid' in holder ? (holder as LockContent) : readLock(path);
  if (!content) return new StartupError(`another receiver is starting on DATA_DIR ${dataDir} (${path})`);
  const ports = content.ports
    ? `ingest port ${content.ports.ingest}, admin port ${content.ports.admin}`
    : 'still starting';
  return new StartupError(
    `another receiver (pid ${content.pid}, ${ports}) holds DATA_DIR ${dataDir}: stop it, or set DATA_DIR to another directory`,
  );
}

function readLock(path: string): LockContent | undefined {
  try {
    const content = JSON.parse(readFileSync(path, 'utf8')) as LockContent;
    return Number.isSafeInteger(content.pid) ? content : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `pid` runs: it exists and is not a zombie. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return !isZombie(pid);
}

/**
 * A process killed but not yet reaped by its parent (Linux: state Z, or X while it goes, in
 * /proc/<pid>/stat) still answers `kill(pid, 0)` but holds nothing: the kernel closed its files, and
 * LevelDB's lock with them. A supervisor restarting within a second meets exactly that. Elsewhere (no
 * /proc) such a process counts as running until it is reaped.
 */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state follows the command name, which is in parentheses and may contain any character.
    return /^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return false;
  }
}
