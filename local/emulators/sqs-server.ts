import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequestHandler } from 'local-aws-sqs';
import { guardEmulator } from '../http/port-guard.js';
import type { SqsEmulator, SqsEmulatorOptions } from './sqs-emulator.js';
import type { EmulatorEntry, EmulatorQueue } from './sqs-internals.js';
import { type JournalRecord, type JournalState, openJournal, readJournal } from './sqs-journal.js';
import type { StoredMessage } from './sqs-message.js';
import { type Durable, patchQueue, toJournalRecord } from './sqs-queue-patch.js';

/**
 * local-aws-sqs made to behave like SQS where the receiver depends on it: what the SQS emulator's
 * thread runs (sqs-emulator.ts starts the thread and says what the emulator does for its callers).
 *
 * Each queue it creates gets a small patch (sqs-queue-patch.ts: FIFO message groups, long polling,
 * the message count and deduplication as SQS does them). It keeps an ordered index of each queue's
 * messages (the peek) and, with `journalPath`, journals every change to them (sqs-journal.ts).
 */
/** Starts the emulator on `host:port` (a free port by default), on the calling thread. */
export async function startSqsServer(options: SqsEmulatorOptions = {}): Promise<SqsEmulator> {
  const host = options.host ?? '127.0.0.1';
  const region = options.region ?? 'us-east-1';
  const accountId = options.accountId ?? '123456789012';
  const { service, requestHandler } = createRequestHandler({
    port: options.port ?? 0,
    hostname: host,
    region,
    accountId,
    emulateQueueCreationLifecycle: false,
  });
  const indexes = new Map<EmulatorQueue, Map<string, EmulatorEntry>>();
  const queues = service.Queues as unknown as EmulatorQueue[];
  const push = queues.push.bind(queues);
  const durable: Durable = { journal: undefined };
  queues.push = (...created: EmulatorQueue[]) => {
    for (const queue of created) patchQueue(queue, indexes, durable, options.deduplicationMs);
    return push(...created);
  };
  const journaled = options.journalPath === undefined ? undefined : readJournal(options.journalPath);
  /** The live messages, plus those of queues that are not there (kept for a later start). */
  const liveState = (): JournalState => {
    const state: JournalState = new Map(kept);
    for (const [queue, index] of indexes) {
      const records = new Map<string, JournalRecord>();
      for (const [id, entry] of index) records.set(id, toJournalRecord(entry.record));
      if (records.size > 0) state.set(queue.QueueName, records);
    }
    return state;
  };
  let kept: JournalState = new Map();

  const server = createServer(
    guardEmulator((req, res) => {
      void requestHandler(req, res);
    }),
  );
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  service.PORT = port;

  return {
    endpoint: `http://${host}:${port}`,
    port,
    region,
    accountId,
    peek(queueName, limit = Number.POSITIVE_INFINITY) {
      const queue = queues.find((candidate) => candidate.QueueName === queueName);
      const index = queue && indexes.get(queue);
      if (!index) throw new Error(`No queue named ${queueName}`);
      const messages: StoredMessage[] = [];
      for (const entry of index.values()) {
        if (messages.length >= limit) break;
        messages.push({
          messageId: entry.record.MessageId,
          body: entry.record.MessageBody,
          inFlight: !entry.visible,
          attributes: { ...entry.record.attributes },
          messageAttributes: { ...entry.record.MessageAttributes },
        });
      }
      return messages;
    },
    recover() {
      if (!options.journalPath || !journaled) return { restored: 0, kept: 0 };
      if (durable.journal) throw new Error('recover() was already called');
      let restored = 0;
      kept = new Map();
      for (const [name, records] of journaled) {
        const queue = queues.find((candidate) => candidate.QueueName === name);
        if (!queue) {
          if (records.size > 0) kept.set(name, records);
          continue;
        }
        for (const record of records.values()) {
          queue.newRecord({ ...record, ReceiptHandle: '', attributes: { ...record.attributes } }, 0);
          restored++;
        }
      }
      journaled.clear();
      durable.journal = openJournal(options.journalPath, liveState(), liveState);
      let keptCount = 0;
      for (const records of kept.values()) keptCount += records.size;
      return { restored, kept: keptCount };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (durable.journal) {
        durable.journal.compact(liveState());
        durable.journal.close();
        durable.journal = undefined;
      }
    },
  };
}
