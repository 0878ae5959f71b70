/**
 * The FIFO queues the ingest writes to, each with the environment variable that carries its URL to
 * the functions: the one list of queues. infra/definitions.ts maps each key to its `<Key>Queue` of
 * infra/resources.yml, for the local runtime and for the ingest's environment in serverless.yml
 * (infra/ingest-environment.cjs): a new key here needs its queue there, not an edit of serverless.yml.
 */
export const QUEUE_ENV_VARS = {
  contact: 'CONTACT_QUEUE_URL',
  activity: 'ACTIVITY_QUEUE_URL',
  webhookState: 'WEBHOOK_STATE_QUEUE_URL',
  entities: 'ENTITIES_QUEUE_URL',
  parked: 'PARKED_QUEUE_URL',
} as const;

export type QueueKey = keyof typeof QUEUE_ENV_VARS;

export const QUEUE_KEYS = Object.keys(QUEUE_ENV_VARS) as QueueKey[];

/**
 * A delivery ready for a FIFO queue, in no transport's encoding: `body` is the text of a valid event
 * or the bytes as received (a parked body may not be UTF-8); `attributes` are as read, unclipped.
 * The adapter encodes both for its transport.
 */
export interface OutboundMessage {
  queue: QueueKey;
  body: string | Uint8Array;
  groupId: string;
  deduplicationId: string;
  attributes: Record<string, string>;
}

/** The port the ingest sends through; adapters translate transport errors into the errors below. */
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

/** The message cannot fit the transport's size limit once encoded; sending it again cannot help. */
export class MessageTooLargeError extends Error {
  constructor(
    readonly queue: QueueKey,
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(`the message for the ${queue} queue takes ${bytes} bytes; the limit is ${limit}`);
    this.name = 'MessageTooLargeError';
  }
}
