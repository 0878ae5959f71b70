import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import type { ThreadMessage } from './emulator-thread.js';
import type { SqsEmulatorOptions } from './sqs-emulator.js';
import { startSqsServer } from './sqs-server.js';

/** What sqs-emulator.ts asks the thread synchronously, and its answer. */
export type SqsCall = { op: 'peek'; queueName: string; limit?: number } | { op: 'recover' };
export type SqsReply = { value: unknown } | { error: string };

/**
 * The SQS emulator's thread (loaded by sqs-thread.mjs): the emulator of sqs-server.ts listening,
 * `calls` answered on their channel (then `answered` is counted up and the waiting thread woken),
 * and 'close' from the runtime answered with 'closed' once the journal is compacted and closed.
 */
const { options, calls, answered } = workerData as {
  options: SqsEmulatorOptions;
  calls: MessagePort;
  answered: Int32Array;
};
const post = (message: ThreadMessage) => parentPort!.postMessage(message);

startSqsServer(options).then(
  (emulator) => {
    calls.on('message', (request: SqsCall) => {
      let reply: SqsReply;
      try {
        reply = {
          value: request.op === 'peek' ? emulator.peek(request.queueName, request.limit) : emulator.recover(),
        };
      } catch (error) {
        reply = { error: (error as Error).message };
      }
      calls.postMessage(reply);
      Atomics.add(answered, 0, 1);
      Atomics.notify(answered, 0);
    });
    parentPort!.on('message', (message) => {
      if (message !== 'close') return;
      emulator.close().then(
        () => post({ type: 'closed' }),
        (error: Error) => post({ type: 'closed', message: error.message }),
      );
    });
    post({ type: 'listening', port: emulator.port });
  },
  (error: NodeJS.ErrnoException) => post({ type: 'error', code: error.code, message: error.message }),
);
