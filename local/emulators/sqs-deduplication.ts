import type { EmulatorQueue } from './sqs-internals.js';

export interface Remembered {
  messageId: string;
  sequenceNumber: string | undefined;
  until: number;
}

/**
 * Patch 4 of sqs-queue-patch.ts: a FIFO queue remembers each deduplication id a client sent for
 * DEDUPLICATION_MS (the emulator's `deduplicationMs`), even after its message was deleted. Only
 * SendMessage and SendMessageBatch entries are deduplicated (they carry QueueUrl or Id); moves to a
 * DLQ and redrives go through the same setRecord and are not.
 * Returns what the patched newRecord asks while setRecord runs: the first send of a repeated id.
 */
export function rememberDeduplicationIds(
  queue: EmulatorQueue,
  deduplicationMs: number,
): { duplicateOf(): Remembered | undefined } {
  const remembered = new Map<string, Remembered>();
  let duplicateOf: Remembered | undefined;
  if (!queue.FifoQueue) return { duplicateOf: () => undefined };

  const setRecord = queue.setRecord;
  queue.setRecord = (request, messageId) => {
    const fromClient = messageId === undefined && ('QueueUrl' in request || 'Id' in request);
    const id = request.MessageDeduplicationId;
    if (!fromClient || id === undefined) return setRecord(request, messageId);
    const key = queue.DeduplicationScope === 'messageGroup' ? `${request.MessageGroupId}\u0000${id}` : id;
    const now = Date.now();
    // Entries expire in the order they were added: drop the expired ones from the front.
    for (const [oldKey, entry] of remembered) {
      if (entry.until > now) break;
      remembered.delete(oldKey);
    }
    duplicateOf = remembered.get(key);
    try {
      const sent = setRecord(request, messageId);
      const { record } = sent;
      if (!duplicateOf) {
        remembered.set(key, {
          messageId: record.MessageId,
          sequenceNumber: record.attributes.SequenceNumber,
          until: now + deduplicationMs,
        });
      }
      return sent;
    } finally {
      duplicateOf = undefined;
    }
  };
  return { duplicateOf: () => duplicateOf };
}
