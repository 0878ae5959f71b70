import {
  applyLine,
  type JournalLine,
  type JournalRecord,
  type JournalState,
  openJournal,
  readJournal,
} from '../emulators/sqs-journal.js';

/**
 * Queues of records held in memory and in a write-ahead journal of the SQS emulator's format
 * (../emulators/sqs-journal.ts): what the local bus must not forget when the process is killed. The journal's
 * records come back at open; every change is appended with a synchronous write(2) before the call
 * returns, then applied to {@link JournaledQueues.state} exactly as a replay would apply it.
 */
export interface JournaledQueues {
  /** The live records of each queue, in the order they were put. */
  readonly state: JournalState;
  /** Adds a record; one with the MessageId of a record in another queue moves it (to a DLQ, say). */
  put(queue: string, record: JournalRecord): void;
  /** Sets a record's ApproximateReceiveCount (for the bus: the attempts made). */
  received(queue: string, id: string, count: number): void;
  remove(queue: string, id: string): void;
  /** Compacts the journal to the live records and closes it. */
  close(): void;
}

/** Opens (or creates) the journal at `path` and compacts it to the records it holds. */
export function openJournaledQueues(path: string): JournaledQueues {
  const state = readJournal(path);
  const journal = openJournal(path, state, () => state);
  const apply = (line: JournalLine, write: () => void) => {
    write();
    applyLine(state, line);
  };
  return {
    state,
    put: (queue, record) => apply({ op: 'put', queue, record }, () => journal.put(queue, record)),
    received: (queue, id, count) => {
      const counts = { [id]: count };
      apply({ op: 'recv', queue, counts }, () => journal.received(queue, counts));
    },
    remove: (queue, id) => apply({ op: 'del', queue, id }, () => journal.remove(queue, id)),
    close() {
      journal.compact(state);
      journal.close();
    },
  };
}
