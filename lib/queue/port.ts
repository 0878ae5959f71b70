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
 * The queues only the receiver's own functions send to, beside QUEUE_ENV_VARS: never in the ingest's
 * environment nor its policy (a forged delivery cannot start a reconcile). `reconcile`: the reconcile
 * requests of lib/reconcile/request.ts. Each is a `<Key>Queue` of infra/resources.yml too.
 */
export const OWN_QUEUE_ENV_VARS = { reconcile: 'RECONCILE_QUEUE_URL' } as const;

export type OwnQueueKey = keyof typeof OWN_QUEUE_ENV_VARS;

/** Every queue of infra/resources.yml that has a DLQ: the ingest's, then the receiver's own. */
export type AnyQueueKey = QueueKey | OwnQueueKey;

export const ALL_QUEUE_ENV_VARS = { ...QUEUE_ENV_VARS, ...OWN_QUEUE_ENV_VARS } as const;

export const ALL_QUEUE_KEYS = Object.keys(ALL_QUEUE_ENV_VARS) as AnyQueueKey[];

/**
 * The attributes a delivery's message carries besides its body, whatever the transport: the one list
 * of their names. The ingest writes the first four on every message (and `retry`, `userAgentVersion`
 * when the sender said them); a parked message adds `reason` and `detail`, a replayed one
 * `replayedAt`. Values are text as written, unparsed; a message read back may lack any of them.
 */
export interface DeliveryAttributes {
  /** The event the headers named. */
  event?: string;
  /** The EventId the headers named. */
  eventId?: string;
  /** `true` when the HMAC signature was verified at the ingest, else `false`. */
  signatureVerified?: string;
  /** When the ingest received the delivery (ISO 8601). */
  receivedAt?: string;
  /** The sender's version, from its User-Agent. */
  userAgentVersion?: string;
  /** The sender's retry count header. */
  retry?: string;
  /** Parked: why, and the detail. */
  reason?: string;
  detail?: string;
  /** Sent again by a replay of the parked queue, at this time (ISO 8601). */
  replayedAt?: string;
}

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
  attributes: DeliveryAttributes;
}

/** The port the ingest sends through; adapters translate transport errors into the errors below. */
export interface QueueSender {
  send(message: OutboundMessage): Promise<void>;
}

/** The queue did not acknowledge the message (after the adapter's own bounded retries). */
export class QueueUnavailableError extends Error {
  constructor(
    message: string,
    readonly queue: AnyQueueKey,
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

/** A message of the parked queue: its id, the body as received (bytes or text), its attributes and group. */
export interface ParkedMessage {
  /** The queue's id of this very message (SQS MessageId): a copy that replaces it is named after it. */
  messageId: string;
  body: string | Uint8Array;
  attributes: Readonly<DeliveryAttributes>;
  groupId: string;
}

/** A parked message as received: what the replay (lib/ingest/replay.ts) reads, and what names a copy. */
export interface ReceivedParked extends ParkedMessage {
  /** Its FIFO deduplication id: a replay knows its own copies by it. */
  deduplicationId: string;
}

/** The parked queue, as the replay uses it (sqs-parked.ts for SQS). */
export interface ParkedSource {
  /** How long a received message stays hidden from other readers (the visibility timeout). */
  readonly hiddenForMs: number;
  /** Up to `max` messages, hidden from other readers for {@link hiddenForMs}. */
  receive(max: number): Promise<ReceivedParked[]>;
  remove(message: ReceivedParked): Promise<void>;
  /** Visible again at once. */
  release(message: ReceivedParked): Promise<void>;
}

/**
 * How long a function's SQS call may take before it gives up (boundedSqsClientConfig): the ingest's
 * default ENQUEUE_TIMEOUT_MS, inside its answer budget, and the reconcile function's, inside its
 * hand-over time.
 */
export const SQS_CALL_BUDGET_MS = 2_500;
