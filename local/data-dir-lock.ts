import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StartupError } from './startup-error.js';

/** Written to DATA_DIR while a receiver runs on it. */
export const LOCK_FILE = 'receiver.lock';

interface LockContent {
  pid: number;
  /** When that process started (see {@link startOf}): a pid reused by another process is no holder. */
  start?: string;
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
  const start = startOf(pid);
  const own = { pid, ...(start !== undefined && { start }) };
  const write = (content: LockContent) => writeFileSync(path, `${JSON.stringify(content)}\n`, { flag: 'w' });
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(path, `${JSON.stringify(own)}\n`, { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw busy(error, path, dataDir);
      const holder = readLock(path);
      if (holder && holder.pid !== pid && holds(holder)) throw busy(holder, path, dataDir);
      // Stale: its process is gone (or its pid is another process's now). Another start may have
      // judged it so too and taken DATA_DIR meanwhile: removed only if it is still the one judged.
      if (!removeStaleLock(path, holder, pid)) throw busy(readLock(path), path, dataDir);
    }
  }
  let released = false;
  return {
    update: (ports) => write({ ...own, ports }),
    release() {
      if (released) return;
      released = true;
      if (readLock(path)?.pid === pid) rmSync(path, { force: true });
    },
  };
}

/**
 * Removes the lock at `path` if it is still `judged` (the stale lock read a moment before), and says
 * whether it did. Two starts that both found a dead holder's lock would otherwise both remove "it" and
 * both take DATA_DIR: the second would remove the first one's fresh lock. The lock is moved aside
 * (rename is atomic) and compared; one that is not the judged one is put back.
 */
export function removeStaleLock(path: string, judged: LockContent | undefined, pid = process.pid): boolean {
  const aside = `${path}.${pid}.stale`;
  try {
    renameSync(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true; // gone already: try again
    throw error;
  }
  const moved = readLock(aside);
  if (
    judged === undefined ? moved === undefined : moved?.pid === judged.pid && moved.start === judged.start
  ) {
    rmSync(aside, { force: true });
    return true;
  }
  renameSync(aside, path);
  return false;
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

/**
 * Whether the lock's process still runs: its pid exists, is not a zombie, and started when the lock says
 * (after a reboot or a container's restart the pid may be another process's, which holds nothing).
 */
function holds({ pid, start }: LockContent): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (start !== undefined && startOf(pid) !== undefined && startOf(pid) !== start) return false;
  return !isZombie(pid);
}

/** When `pid` started, in clock ticks since boot (Linux: /proc/<pid>/stat's 22nd field); undefined elsewhere. */
function startOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name (in parentheses, any character) start with the 3rd, the state.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
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
