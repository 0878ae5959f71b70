import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { StartupError } from '../startup-error.js';
import { startEmulatorThread } from './emulator-thread.js';

/**
 * dynalite, persisted under a directory (LevelDB) so tables survive a restart, on its own thread
 * (dynamo-worker.cjs, which also says why its tables are served from memory).
 *
 * The functions and the ingest share the main thread, which is what bounds the local rate; dynalite's
 * request parsing, validation and LevelDB callbacks run on a worker thread instead (as the SQS
 * emulator does on its own), so another core does them. Nothing changes for the clients: it is an HTTP endpoint either way.
 * Its port answers only what the SDK sends, signed with the runtime's key (port-guard.js): no web page.
 */
export interface DynamoEmulator {
  endpoint: string;
  port: number;
  close(): Promise<void>;
}

export interface DynamoEmulatorOptions {
  /** LevelDB directory; created when missing. */
  path: string;
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
}

export async function startDynamoEmulator(options: DynamoEmulatorOptions): Promise<DynamoEmulator> {
  const host = options.host ?? '127.0.0.1';
  mkdirSync(options.path, { recursive: true });
  const thread = startEmulatorThread(new URL('./dynamo-worker.cjs', import.meta.url), {
    workerData: {
      dynalite: createRequire(import.meta.url).resolve('dynalite'),
      path: options.path,
      host,
      port: options.port ?? 0,
    },
  });
  const { worker } = thread;
  const started = await thread.next().catch(async (error: unknown) => {
    await worker.terminate();
    throw error;
  });
  if (started.type !== 'listening') {
    await worker.terminate();
    if (started.code === 'STORE') {
      throw new StartupError(
        `cannot open the DynamoDB tables under ${options.path} (${started.message}): if another process ` +
          'holds them, stop it; if they are damaged, move the directory away to start with empty tables',
      );
    }
    throw Object.assign(new Error(`dynalite did not start: ${started.message ?? started.type}`), {
      code: started.code,
    });
  }
  const { port } = started;
  return {
    endpoint: `http://${host}:${port}`,
    port,
    /** Stops the server and closes the LevelDB store, which flushes it; then ends the thread. */
    async close() {
      const answer = await thread.close();
      if (answer.type === 'closed' && answer.message) throw new Error(answer.message);
    },
  };
}
