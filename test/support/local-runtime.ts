import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { buildSampleDelivery } from '../../tools/samples.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface RuntimeProcess {
  child: ChildProcess;
  port: number;
  adminPort: number;
  webhookUrl: string;
  adminUrl: string;
  /** Milliseconds from spawning `npm start` to its ready line. */
  readyMs: number;
  /** Everything the process printed so far (stdout and stderr, the last 1 MB). */
  output(): string;
  /** SIGTERM to the process group, as a terminal's Ctrl-C would; resolves with npm's exit code once all of it is gone. */
  stop(): Promise<number | null>;
  /** SIGKILL to the whole process group (npm, tsx, the runtime): a crash; resolves once all of it is gone. */
  kill(): Promise<void>;
}

export interface SpawnOptions {
  /** DATA_DIR; left unset (the default, `.data` in `cwd`) when undefined. */
  dataDir: string | undefined;
  /** Where `npm start` runs (default: this repository). */
  cwd?: string;
  env?: Record<string, string>;
  port?: number;
  adminPort?: number;
  readyTimeoutMs?: number;
}

/**
 * `npm start` expected to fail before it is ready: its exit code and the lines it printed, npm's own
 * warnings left out. Ports are free ones unless `env` names them.
 */
export async function failedStart(options: {
  dataDir: string;
  env?: Record<string, string>;
}): Promise<{ code: number | null; lines: string[] }> {
  const child = spawn('npm', ['start', '--silent'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      DATA_DIR: options.dataDir,
      PORT: String(await freePort()),
      ADMIN_PORT: String(await freePort()),
      ENV_FILE: '/nonexistent/.env',
      ...options.env,
    },
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, lines: output.split('\n').filter((line) => line !== '' && !line.startsWith('npm warn')) };
}

/** A port that was free a moment ago. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts `npm start` the way a user does, in its own process group, on the given (or free) ports, and
 * resolves once it prints its ready line. The emulators pick their own free ports, so several of these
 * can run side by side.
 */
export async function spawnLocalRuntime(options: SpawnOptions): Promise<RuntimeProcess> {
  // A port free a moment ago may be taken by another test before npm start binds it: with ports of
  // its own choosing, the harness tries fresh ones (npm start itself refuses a taken port in one line).
  for (let attempt = 1; ; attempt++) {
    try {
      return await spawnOnce(options);
    } catch (error) {
      const own = options.port === undefined && options.adminPort === undefined;
      if (!own || attempt === 3 || !/is in use by another process/.test(String(error))) throw error;
    }
  }
}

async function spawnOnce(options: SpawnOptions): Promise<RuntimeProcess> {
  const port = options.port ?? (await freePort());
  const adminPort = options.adminPort ?? (await freePort());
  const started = performance.now();
  const child = spawn('npm', ['start', '--silent'], {
    cwd: options.cwd ?? ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      ...(options.dataDir === undefined ? {} : { DATA_DIR: options.dataDir }),
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      SQS_PORT: '0',
      DYNAMODB_PORT: '0',
      ENV_FILE: '/nonexistent/.env',
      POWERTOOLS_LOG_LEVEL: 'WARN',
      ...options.env,
    },
  });
  let output = '';
  const append = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-1_000_000);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const readyMs = await new Promise<number>((resolve, reject) => {
    // Not ready in time: the whole group is killed before the test hears of it, so no runtime is left
    // holding the ports and DATA_DIR after a failed test.
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      clearInterval(poll);
      const error = new Error(
        `npm start was not ready within ${options.readyTimeoutMs ?? 30_000} ms:\n${output}`,
      );
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
      void exited.then(() => reject(error));
    }, options.readyTimeoutMs ?? 30_000);
    const poll = setInterval(() => {
      if (/^ready in \d+ ms/m.test(output)) {
        clearInterval(poll);
        clearTimeout(timer);
        resolve(Math.round(performance.now() - started));
      }
    }, 20);
    void exited.then((code) => {
      if (timedOut) return;
      clearInterval(poll);
      clearTimeout(timer);
      reject(new Error(`npm start exited with ${code} before it was ready:\n${output}`));
    });
  });

  const group = -child.pid!;
  const alive = () => {
    try {
      process.kill(group, 0);
      return true;
    } catch {
      return false;
    }
  };

  return {
    child,
    port,
    adminPort,
    webhookUrl: `http://127.0.0.1:${port}/webhook`,
    adminUrl: `http://127.0.0.1:${adminPort}`,
    readyMs,
    output: () => output,
    async kill() {
      if (!alive()) return;
      process.kill(group, 'SIGKILL');
      // Killed processes that no one reaps (a container without an init) stay visible: bounded wait.
      const deadline = Date.now() + 10_000;
      while (alive() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      await exited;
    },
    async stop() {
      if (!alive()) return exited;
      process.kill(group, 'SIGTERM');
      // npm may exit before the runtime it started has finished stopping: wait for the whole group.
      const deadline = Date.now() + 20_000;
      while (alive()) {
        if (Date.now() > deadline) {
          process.kill(group, 'SIGKILL');
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      return exited;
    },
  };
}

/** POSTs `body` to a runtime's `webhookUrl` as the CRM sends it: every header, signed with `secret` (unsigned without). */
export function postDelivery(
  webhookUrl: string,
  body: Record<string, unknown>,
  secret?: string,
): Promise<Response> {
  const delivery = buildSampleDelivery(body, secret === undefined ? {} : { secret });
  return fetch(webhookUrl, { method: 'POST', headers: delivery.headers, body: delivery.body });
}

/** The JSON answer of a running `npm start`'s admin API at `path` (`adminUrl`'s): its status and body. */
export async function adminJson<T = unknown>(
  adminUrl: string,
  path: string,
  init?: RequestInit,
): Promise<{ status: number; body: T }> {
  const answer = await fetch(`${adminUrl}${path}`, init);
  return { status: answer.status, body: (await answer.json()) as T };
}
