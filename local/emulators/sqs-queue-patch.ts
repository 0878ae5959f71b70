import { randomUUID } from 'node:crypto';
import { rememberDeduplicationIds } from './sqs-deduplication.js';
import type { EmulatorEntry, EmulatorQueue, EmulatorRecord } from './sqs-internals.js';
import type { Journal, JournalRecord } from './sqs-journal.js';

/**
 * What makes a queue of local-aws-sqs behave like SQS where the receiver depends on it
 * (sqs-emulator.ts applies it to every queue the emulator creates).
 *
 * The emulator as published differs from SQS in five ways that matter here, so each queue it creates
 * gets this patch (verified by test/local/sqs-emulator.test.ts, which fails loudly if an upgrade
 * changes the internals it relies on):
 *
 * 1. FIFO message groups: SQS hands out no message of a group while another message of that group is
 *    in flight, and a group's messages in order. The emulator ignores groups.
 * 2. Long polling: SQS answers as soon as a message is available. The emulator waits until it has
 *    `MaxNumberOfMessages` or the wait time is over.
 * 3. `ApproximateNumberOfMessages` counts only messages available for retrieval; the emulator counts
 *    in-flight messages too.
 * 4. Deduplication: SQS remembers a FIFO message's deduplication id for 5 minutes after it was sent,
 *    deleted or not, and answers a SendMessage with that id with the first MessageId without queuing
 *    it. The emulator only compares with the messages still in the queue. The memory is not journaled:
 *    after a restart the emulator forgets the ids of messages already deleted (the workers' conditional
 *    history write still applies such a repeat once).
 * 5. ChangeMessageVisibility: SQS counts receives only; the emulator counts a visibility change as one
 *    more receive, so a message received once and made visible again had spent two of its
 *    maxReceiveCount.
 *
 * It also keeps an ordered index of each queue's messages (for the emulator's peek) and journals
 * every change to them once the emulator has a journal.
 */

/**
 * Pollers wake on a new message or a deletion; this interval covers what the emulator changes on its
 * own timers (a visibility timeout ending).
 */
const POLL_MS = 50;
/** SQS's deduplication interval. */
export const DEDUPLICATION_MS = 5 * 60 * 1000;

/** Where a patched queue journals its changes, once the runtime has recovered the journal. */
export interface Durable {
  journal: Journal | undefined;
}

export function toJournalRecord(record: EmulatorRecord): JournalRecord {
  return {
    MessageId: record.MessageId,
    MessageBody: record.MessageBody,
    attributes: { ...record.attributes },
    ...(record.MessageAttributes ? { MessageAttributes: record.MessageAttributes } : {}),
    ...(record.MD5OfMessageBody ? { MD5OfMessageBody: record.MD5OfMessageBody } : {}),
    ...(record.MD5OfMessageAttributes ? { MD5OfMessageAttributes: record.MD5OfMessageAttributes } : {}),
  };
}

export function patchQueue(
  queue: EmulatorQueue,
  indexes: Map<EmulatorQueue, Map<string, EmulatorEntry>>,
  durable: Durable,
  deduplicationMs = DEDUPLICATION_MS,
): void {
  for (const method of [
    'setRecord',
    'newRecord',
    'receive',
    'delete',
    'changeVisibility',
    'clearRecords',
  ] as const) {
    if (typeof queue[method] !== 'function') {
      throw new Error(
        `local-aws-sqs changed: queue.${method} is missing; local/emulators/sqs-queue-patch.ts needs updating`,
      );
    }
  }
  const index = new Map<string, EmulatorEntry>();
  indexes.set(queue, index);
  const waiters = new Set<() => void>();
  const wakeAll = () => {
    for (const wake of waiters) wake();
  };

  const deduplication = rememberDeduplicationIds(queue, deduplicationMs);

  const newRecord = queue.newRecord;
  queue.newRecord = (record, delaySeconds) => {
    const duplicateOf = deduplication.duplicateOf();
    if (duplicateOf) {
      // A repeat within the deduplication interval: answered with the first MessageId, never queued.
      record.MessageId = duplicateOf.messageId;
      if (duplicateOf.sequenceNumber) record.attributes.SequenceNumber = duplicateOf.sequenceNumber;
      return { visible: false, delayed: false, record };
    }
    // Write-ahead: on disk before the emulator answers SendMessage (and so before the ingest's 200).
    durable.journal?.put(queue.QueueName, toJournalRecord(record));
    const entry = newRecord(record, delaySeconds);
    if (typeof entry?.visible !== 'boolean' || entry.record !== record) {
      throw new Error('local-aws-sqs changed: newRecord no longer returns its entry');
    }
    // A message moved to a DLQ keeps its MessageId: it has left its source queue.
    for (const [other, otherIndex] of indexes) if (other !== queue) otherIndex.delete(record.MessageId);
    index.set(record.MessageId, entry);
    // The emulator makes even an undelayed message available on a 0 ms timer; SQS at once: a client
    // on another thread can ask again sooner than that timer runs.
    const delay = Number(delaySeconds);
    if ((Number.isNaN(delay) ? queue.DelaySeconds : delay) === 0) {
      entry.delayed = false;
      wakeAll();
    } else setTimeout(wakeAll, 1).unref();
    return entry;
  };

  const remove = queue.delete.bind(queue);
  queue.delete = (receiptHandle) => {
    const deleted = remove(receiptHandle);
    const id = messageIdOf(receiptHandle);
    const entry = id === undefined ? undefined : index.get(id);
    if (id !== undefined && entry?.record.ReceiptHandle === receiptHandle) {
      index.delete(id);
      durable.journal?.remove(queue.QueueName, id);
      // A deleted message may unblock its group.
      if (entry.record.attributes.MessageGroupId !== undefined) wakeAll();
    }
    return deleted;
  };

  const clearRecords = queue.clearRecords.bind(queue);
  queue.clearRecords = () => {
    clearRecords();
    index.clear();
    durable.journal?.clear(queue.QueueName);
  };

  if (queue.FifoQueue) {
    queue.getAttributes = wrapGetAttributes(queue.getAttributes.bind(queue), index);
  }

  // Patch 5: a receive (take, below) counts; a visibility change afterwards does not.
  const changeVisibility = queue.changeVisibility.bind(queue);
  queue.changeVisibility = (receiptHandle, seconds) => {
    const id = messageIdOf(receiptHandle);
    const attributes = id === undefined ? undefined : index.get(id)?.record.attributes;
    const count = attributes?.ApproximateReceiveCount;
    const changed = changeVisibility(receiptHandle, seconds);
    if (attributes !== undefined && count !== undefined) attributes.ApproximateReceiveCount = count;
    // Visible again at once, as in SQS, not on the emulator's 0 ms timer (which still runs, and moves
    // the message to the DLQ instead when it has spent its receives).
    const entry = id === undefined ? undefined : index.get(id);
    if (changed && Number(seconds) === 0 && entry && !spent(queue, entry)) {
      entry.visible = true;
      wakeAll();
    }
    return changed;
  };

  queue.receive = async ({ VisibilityTimeout, WaitTimeSeconds, MaxNumberOfMessages }) => {
    const max = Number(MaxNumberOfMessages ?? 1);
    const waitMs = Number(WaitTimeSeconds ?? queue.ReceiveMessageWaitTimeSeconds) * 1000;
    const visibility =
      VisibilityTimeout === undefined || VisibilityTimeout === null
        ? queue.VisibilityTimeout
        : Number(VisibilityTimeout);
    const deadline = Date.now() + waitMs;
    for (;;) {
      const picked = pick(index, max, queue.FifoQueue);
      if (picked.length > 0 || Date.now() >= deadline) {
        const taken = picked.map((entry) => take(changeVisibility, queue.QueueName, entry, visibility));
        if (taken.length > 0 && durable.journal) {
          const counts: Record<string, number> = {};
          for (const record of taken)
            counts[record.MessageId] = Number(record.attributes.ApproximateReceiveCount);
          durable.journal.received(queue.QueueName, counts);
        }
        return taken;
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(POLL_MS, Math.max(0, deadline - Date.now())));
        waiters.add(wake);
      });
    }
  };
}

/** The MessageId inside a receipt handle (base64 of a UUID and `{date, MessageId, QueueName}`). */
function messageIdOf(receiptHandle: string): string | undefined {
  try {
    const text = Buffer.from(receiptHandle, 'base64').toString('utf-8');
    const parsed = JSON.parse(text.slice(text.indexOf('{'))) as { MessageId?: unknown };
    return typeof parsed.MessageId === 'string' ? parsed.MessageId : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the emulator's visibility timer will move this message to the queue's DLQ. */
function spent(queue: EmulatorQueue, entry: EmulatorEntry): boolean {
  const max = queue.RedrivePolicy?.maxReceiveCount;
  return max !== undefined && Number(entry.record.attributes.ApproximateReceiveCount) >= Number(max);
}

/** Available messages in order; on a FIFO queue none of a group that has a message in flight. */
function pick(index: Map<string, EmulatorEntry>, max: number, fifo: boolean): EmulatorEntry[] {
  const blocked = new Set<string>();
  if (fifo) {
    for (const entry of index.values()) {
      const group = entry.record.attributes.MessageGroupId;
      if (!entry.visible && group !== undefined) blocked.add(group);
    }
  }
  const picked: EmulatorEntry[] = [];
  for (const entry of index.values()) {
    if (picked.length >= max) break;
    if (!entry.visible || entry.delayed) continue;
    const group = entry.record.attributes.MessageGroupId;
    if (group !== undefined && blocked.has(group)) continue;
    picked.push(entry);
  }
  return picked;
}

/**
 * Marks an entry in flight through the emulator's own visibility logic (receive count, first receive
 * time, and the timer that makes it visible again or moves it to the DLQ), and returns a copy of its
 * record as the emulator's receive does.
 */
function take(
  changeVisibility: EmulatorQueue['changeVisibility'],
  queueName: string,
  entry: EmulatorEntry,
  visibilityTimeout: number,
): EmulatorRecord {
  const receiptHandle = Buffer.from(
    randomUUID() +
      JSON.stringify({ date: Date.now(), MessageId: entry.record.MessageId, QueueName: queueName }),
    'utf-8',
  ).toString('base64');
  entry.visible = false;
  entry.record.ReceiptHandle = receiptHandle;
  changeVisibility(receiptHandle, visibilityTimeout);
  return { ...entry.record, attributes: { ...entry.record.attributes } };
}

function wrapGetAttributes(
  getAttributes: EmulatorQueue['getAttributes'],
  index: Map<string, EmulatorEntry>,
): EmulatorQueue['getAttributes'] {
  return (names) => {
    const attributes = getAttributes(names);
    if (attributes?.ApproximateNumberOfMessages !== undefined) {
      let visible = 0;
      for (const entry of index.values()) if (entry.visible && !entry.delayed) visible++;
      attributes.ApproximateNumberOfMessages = String(visible);
    }
    return attributes;
  };
}
