import { Worker, type WorkerOptions } from 'node:worker_threads';

/** What an emulator's thread says: its port once it listens, why it did not start, that it closed. */
export type ThreadMessage =
  | { type: 'listening'; port: number }
  /** `code`: the server's (EADDRINUSE, ...), or the emulator's own (STORE: dynalite's tables cannot be opened). */
  | { type: 'error' | 'closed'; code?: string; message?: string };

/**
 * An emulator's worker thread as dynamo-emulator.ts and sqs-emulator.ts start it: the thread, and its
 * messages one at a time (its first says whether it listens). A thread that fails to load rejects the
 * message awaited; once started, an error of the thread is left unhandled, so it stops the process
 * loudly, as it would have on the main thread.
 */
export interface EmulatorThread {
  worker: Worker;
  /** The thread's next message (or its error, while this waits). */
  next(): Promise<ThreadMessage>;
  /** Asks the thread to close (`'close'`), waits for its answer, then ends the thread. */
  close(): Promise<ThreadMessage>;
}

export function startEmulatorThread(url: URL, options: WorkerOptions): EmulatorThread {
  const worker = new Worker(url, options);
  const next = (): Promise<ThreadMessage> =>
    new Promise((resolve, reject) => {
      const onError = (error: Error) => {
        worker.off('message', onMessage);
        reject(error);
      };
      const onMessage = (message: ThreadMessage) => {
        worker.off('error', onError);
        resolve(message);
      };
      worker.once('message', onMessage);
      worker.once('error', onError);
    });
  return {
    worker,
    next,
    async close() {
      const closed = next();
      worker.postMessage('close');
      const answer = await closed;
      await worker.terminate();
      return answer;
    },
  };
}
