import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { StartupError } from './startup-error.js';

/**
 * dynalite, persisted under a directory (LevelDB) so tables survive a restart, on its own thread
 * (dynamo-worker.cjs, which also says why its tables are served from memory).
 *
 * The functions, the ingest and the SQS emulator share the main thread, which is what bounds the local
 * rate; dynalite's request parsing, validation and LevelDB callbacks run on a worker thread instead,
 * so a second core does them. Nothing changes for the clients: it is an HTTP endpoint either way.
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

type WorkerMessage =
  | { type: 'listening'; port: number }
  /** `code`: the server's (EADDRINUSE, ...), or STORE when the tables' directory cannot be opened. */
  | { type: 'error' | 'closed'; code?: string; message?: string };

export async function startDynamoEmulator(options: DynamoEmulatorOptions): Promise<DynamoEmulator> {
  const host = options.host ?? '127.0.0.1';
  mkdirSync(options.path, { recursive: true });
  const worker = new Worker(new URL('./dynamo-worker.cjs', import.meta.url), {
    workerData: {
      dynalite: createRequire(import.meta.url).resolve('dynalite'),
      path: options.path,
      host,
      port: options.port ?? 0,
    },
  });
  const next = (): Promise<WorkerMessage> =>
    new Promise((resolve, reject) => {
      const onError = (error: Error) => {
        worker.off('message', onMessage);
        reject(error);
      };
      const onMessage = (message: WorkerMessage) => {
        worker.off('error', onError);
        resolve(message);
      };
      worker.once('message', onMessage);
      worker.once('error', onError);
    });

  const started = await next().catch(async (error: unknown) => {
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
      const closed = next();
      worker.postMessage('close');
      const answer = await closed;
      await worker.terminate();
      if (answer.type === 'closed' && answer.message) throw new Error(answer.message);
    },
  };
}
