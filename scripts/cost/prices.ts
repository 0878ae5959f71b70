/** us-east-1 list prices (USD), 2025. */
export const PRICES = {
  httpApiPerRequest: 1.0 / 1e6,
  lambdaPerRequest: 0.2 / 1e6,
  lambdaArmPerGbSecond: 0.0000133334,
  sqsFifoPerRequest: 0.5 / 1e6,
  dynamoPerWru: 0.625 / 1e6,
  dynamoPerRru: 0.125 / 1e6,
  dynamoStoragePerGbMonth: 0.25,
  logsPerGb: 0.5,
  /** Custom events put on a bus, per 64 KB chunk of an entry (ours are well under 64 KB). */
  eventBridgePerEntry: 1.0 / 1e6,
  apiDestinationPerInvocation: 0.2 / 1e6,
};

/**
 * Worker batch sizes priced. FIFO event source mappings have no batching window: a batch holds what
 * the queue has at that moment, so at a few events per second or less it holds about one message.
 */
export const BATCH_SIZES = [1, 2, 5, 10] as const;

/** What the stack is configured with, and estimated durations (see docs/deploy.md). */
export const ASSUMPTIONS = {
  ingestMemoryGb: 0.25,
  ingestMs: 30,
  workerMemoryGb: 0.25,
  workerMsPerEvent: 25,
  /** CloudWatch Logs bills each log event's message plus 26 bytes. */
  logEventOverheadBytes: 26,
  /** EVENT_RETENTION_DAYS by default: how long a history item and its index entry are stored. */
  eventRetentionDays: 30,
  /** DynamoDB adds 100 bytes to each index entry, in both its write size and its storage. */
  indexEntryOverheadBytes: 100,
};
