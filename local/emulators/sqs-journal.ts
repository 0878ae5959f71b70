import {
  closeSync,
  existsSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
} from 'node:fs';

/**
 * The write-ahead journal that makes the in-memory SQS emulator survive a killed process.
 *
 * Every change to a queue's contents is appended as one JSON line, synchronously, from inside the
 * emulator's own call: a message accepted (SendMessage, a move to a DLQ, a redrive) is on disk before
 * the emulator answers, so before the ingest answers 200; a receive journals the new receive counts,
 * a delete or purge the removal. On start the journal is replayed (messages in their original order,
 * with MessageId, group, deduplication id, attributes and receive count), then compacted to the live
 * messages; it is compacted again on a graceful stop and whenever it grows past a bound.
 *
 * The lines reach the operating system with write(2) before the call returns, which survives a killed
 * process (`kill -9`); without fsync, a power loss or kernel crash can still lose the last writes.
 *
 * The local bus keeps its rule targets' pending deliveries and dead letters in a journal of the same
 * format (../bus/journaled-queues.ts).
 */
export interface JournalRecord {
  MessageId: string;
  MessageBody: string;
  attributes: Record<string, string>;
  MessageAttributes?: Record<string, { DataType: string; StringValue?: string; BinaryValue?: string }>;
  MD5OfMessageBody?: string;
  MD5OfMessageAttributes?: string;
}

export type JournalLine =
  | { op: 'put'; queue: string; record: JournalRecord }
  | { op: 'del'; queue: string; id: string }
  | { op: 'recv'; queue: string; counts: Record<string, number> }
  | { op: 'clear'; queue: string };

/** The messages of each queue, in order, as the journal leaves them. */
export type JournalState = Map<string, Map<string, JournalRecord>>;

export interface Journal {
  put(queue: string, record: JournalRecord): void;
  remove(queue: string, id: string): void;
  received(queue: string, counts: Record<string, number>): void;
  clear(queue: string): void;
  /** Rewrites the file as the given live messages only (atomically: temporary file, rename). */
  compact(live: JournalState): void;
  close(): void;
  readonly path: string;
}

/** Compact once the file passes this size and is more than twice what the last compaction wrote. */
const COMPACT_BYTES = 64 * 1024 * 1024;

/** Replays a journal into the messages it describes; a torn last line (power loss) is ignored. */
export function readJournal(path: string): JournalState {
  const state: JournalState = new Map();
  if (!existsSync(path)) return state;
  const lines = readFileSync(path, 'utf8').split('\n');
  for (const [n, text] of lines.entries()) {
    if (text === '') continue;
    let line: JournalLine;
    try {
      line = JSON.parse(text) as JournalLine;
    } catch (error) {
      if (lines.slice(n + 1).every((rest) => rest === '')) break;
      throw new Error(`${path}: line ${n + 1} is not JSON`, { cause: error });
    }
    applyLine(state, line);
  }
  return state;
}

/** What one journal line does to the messages: how the journal is replayed (and mirrored in memory). */
export function applyLine(state: JournalState, line: JournalLine): void {
  switch (line.op) {
    case 'put': {
      // A move to a DLQ keeps the MessageId: the message has left every other queue.
      for (const other of state.values()) other.delete(line.record.MessageId);
      const queue = state.get(line.queue) ?? new Map<string, JournalRecord>();
      state.set(line.queue, queue);
      queue.set(line.record.MessageId, line.record);
      break;
    }
    case 'del':
      state.get(line.queue)?.delete(line.id);
      break;
    case 'recv':
      for (const [id, count] of Object.entries(line.counts)) {
        const record = state.get(line.queue)?.get(id);
        if (record) record.attributes.ApproximateReceiveCount = String(count);
      }
      break;
    case 'clear':
      state.get(line.queue)?.clear();
      break;
  }
}

/**
 * Opens the journal for appending, after writing `live` as its only content. `onCompact` supplies
 * the live messages when the file has grown enough to be rewritten.
 */
export function openJournal(path: string, live: JournalState, onCompact: () => JournalState): Journal {
  let fd = -1;
  let compactedBytes = 0;
  let bytes = 0;

  const rewrite = (state: JournalState) => {
    const temporary = `${path}.tmp`;
    const out = openSync(temporary, 'w');
    let written = 0;
    try {
      for (const [queue, records] of state) {
        for (const record of records.values()) {
          written += writeLine(out, { op: 'put', queue, record });
        }
      }
    } finally {
      closeSync(out);
    }
    renameSync(temporary, path);
    if (fd >= 0) closeSync(fd);
    fd = openSync(path, 'a');
    compactedBytes = written;
    bytes = fstatSync(fd).size;
  };

  const append = (line: JournalLine) => {
    if (fd < 0) throw new Error(`the journal ${path} is closed`);
    // Before the line, so that the rewrite cannot drop a message that is not in the live set yet.
    if (bytes > COMPACT_BYTES && bytes > 2 * compactedBytes) rewrite(onCompact());
    try {
      bytes += writeLine(fd, line);
    } catch (error) {
      // Cut back to the last whole line, or the next line would be glued to the torn one.
      ftruncateSync(fd, bytes);
      throw error;
    }
  };

  /** Writes one line whole, or throws: write(2) cuts a write short on a full disk, silently to Node. */
  const writeLine = (out: number, line: JournalLine): number => {
    const text = `${JSON.stringify(line)}\n`;
    const length = Buffer.byteLength(text);
    const written = writeSync(out, text);
    if (written !== length)
      throw new Error(`the journal ${path}: ${written} of ${length} bytes written (is the disk full?)`);
    return written;
  };

  rewrite(live);
  return {
    path,
    put: (queue, record) => append({ op: 'put', queue, record }),
    remove: (queue, id) => append({ op: 'del', queue, id }),
    received: (queue, counts) => append({ op: 'recv', queue, counts }),
    clear: (queue) => append({ op: 'clear', queue }),
    compact: (state) => rewrite(state),
    close() {
      if (fd >= 0) closeSync(fd);
      fd = -1;
    },
  };
}
