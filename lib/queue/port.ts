/** The four FIFO queues the ingest writes to. */
export type QueueKey = 'contact' | 'activity' | 'webhookState' | 'parked';

export const QUEUE_KEYS: readonly QueueKey[] = ['contact', 'activity', 'webhookState', 'parked'];

/** A message ready for a FIFO queue; `attributes` are String message attributes. */
export interface OutboundMessage {
  queue: QueueKey;
  body: string;
  groupId: string;
  deduplicationId: string;
  attributes: Record<string, string>;
}

/** The port the ingest sends through; adapters translate transport errors into {@link QueueUnavailableError}. */
export interface QueueSender {
  send(message: OutboundMessage): Promise<void>;
}

/** The queue did not acknowledge the message (after the adapter's own bounded retries). */
export class QueueUnavailableError extends Error {
  constructor(
    message: string,
    readonly queue: QueueKey,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'QueueUnavailableError';
  }
}
