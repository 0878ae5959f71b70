import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { startEmulatorThread } from './emulator-thread.js';
import type { StoredMessage } from './sqs-message.js';
import type { SqsCall, SqsReply } from './sqs-thread.js';

/**
 * local-aws-sqs, made to behave like SQS where the receiver depends on it (sqs-server.ts), on its own
 * worker thread, as dynalite runs on its own (dynamo-emulator.ts): its request parsing, queue patch
 * and journal take another core than the functions and the ingest. Nothing changes for the clients:
 * it is an HTTP endpoint either way.
 *
 * Each queue it creates gets a small patch (sqs-queue-patch.ts: FIFO message groups, long polling,
 * the message count and deduplication as SQS does them).
 *
 * It also keeps an ordered index of each queue's messages, which gives the local runtime a peek that
 * does not touch receive counts (for the admin API), and, with `journalPath`, journals every change to
 * them (sqs-journal.ts) so that the queues survive a restart and a killed process alike: the journal
 * is written by the thread, before it answers.
 *
 * Its port answers only what the SDK sends, signed with the runtime's key (port-guard.js): no web page.
 */
export interface SqsEmulator {
  endpoint: string;
  port: number;
  region: string;
  accountId: string;
  /** The queue's messages in order, without receiving them (visible and in flight alike). */
  peek(queueName: string, limit?: number): StoredMessage[];
  /**
   * With `journalPath`: puts the journal's messages back into the queues that exist now (create them
   * first), compacts the journal and starts journaling. Returns how many messages came back. Messages
   * of queues that do not exist are kept in the journal for a later start.
   */
  recover(): { restored: number; kept: number };
  /** Stops the server; with a journal, compacts it to the messages left and closes it. */
  close(): Promise<void>;
}

export interface SqsEmulatorOptions {
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  region?: string;
  accountId?: string;
  /** Write-ahead journal of the queues' contents (see sqs-journal.ts); none by default. */
  journalPath?: string;
  /** How long a FIFO queue remembers a deduplication id; SQS's 5 minutes by default. */
  deduplicationMs?: number;
}

/** How long peek and recover wait for the thread before they fail (it answers between requests). */
const CALL_TIMEOUT_MS = 30_000;

/** Starts the emulator's thread, listening on `host:port` (a free port by default). */
export async function startSqsEmulator(options: SqsEmulatorOptions = {}): Promise<SqsEmulator> {
  const host = options.host ?? '127.0.0.1';
  const region = options.region ?? 'us-east-1';
  const accountId = options.accountId ?? '123456789012';
  // peek and recover answer synchronously, as their callers expect: the call is posted on its own
  // channel, and this thread sleeps on `answered` until the emulator's thread has posted the reply.
  const { port1: calls, port2: callsInThread } = new MessageChannel();
  const answered = new Int32Array(new SharedArrayBuffer(4));
  const thread = startEmulatorThread(new URL('./sqs-thread.mjs', import.meta.url), {
    workerData: { options: { ...options, host, region, accountId }, calls: callsInThread, answered },
    transferList: [callsInThread],
  });
  const started = await thread.next().catch(async (error: unknown) => {
    await thread.worker.terminate();
    throw error;
  });
  if (started.type !== 'listening') {
    await thread.worker.terminate();
    throw Object.assign(new Error(started.message ?? `the SQS emulator did not start (${started.type})`), {
      code: started.code,
    });
  }

  const call = <T>(request: SqsCall): T => {
    const before = Atomics.load(answered, 0);
    calls.postMessage(request);
    if (Atomics.wait(answered, 0, before, CALL_TIMEOUT_MS) === 'timed-out')
      throw new Error(`the SQS emulator's thread did not answer ${request.op} within ${CALL_TIMEOUT_MS} ms`);
    const reply = receiveMessageOnPort(calls)?.message as SqsReply | undefined;
    if (!reply) throw new Error(`the SQS emulator's thread answered ${request.op} with nothing`);
    if ('error' in reply) throw new Error(reply.error);
    return reply.value as T;
  };

  const { port } = started;
  return {
    endpoint: `http://${host}:${port}`,
    port,
    region,
    accountId,
    peek: (queueName, limit) => call<StoredMessage[]>({ op: 'peek', queueName, limit }),
    recover: () => call<{ restored: number; kept: number }>({ op: 'recover' }),
    async close() {
      const answer = await thread.close();
      calls.close();
      if (answer.type === 'closed' && answer.message) throw new Error(answer.message);
    },
  };
}
