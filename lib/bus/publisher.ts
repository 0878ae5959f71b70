import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { type BusEntry, entrySize, MAX_ENTRY_BYTES } from './entry.js';

/** How one entry fared: EventBridge's event id, or its error code (one failed entry fails one record). */
export type PublishResult =
  | { ok: true; eventId: string }
  | { ok: false; errorCode: string; errorMessage: string };

/** The port the workers publish through: one result per entry, in the entries' order. */
export interface EventPublisher {
  publish(entries: readonly BusEntry[]): Promise<PublishResult[]>;
}

/** EventBridge's limit on entries per PutEvents call. */
export const MAX_BATCH_ENTRIES = 10;

export interface EventBridgePublisherOptions {
  client: EventBridgeClient;
  eventBusName: string;
}

/**
 * Publishes through PutEvents in calls of at most 10 entries and 256 KB. A call that throws fails
 * each of its entries with the error's name; a partial failure (FailedEntryCount) fails only the
 * entries that carry an ErrorCode.
 */
export function createEventBridgePublisher({
  client,
  eventBusName,
}: EventBridgePublisherOptions): EventPublisher {
  return {
    async publish(entries) {
      const results: PublishResult[] = [];
      for (const batch of batches(entries)) {
        results.push(...(await putEvents(client, eventBusName, batch)));
      }
      return results;
    },
  };
}

/** Splits entries, in order, into PutEvents calls: at most 10 entries and 256 KB of entries each. */
export function batches(entries: readonly BusEntry[]): BusEntry[][] {
  const calls: BusEntry[][] = [];
  let current: BusEntry[] = [];
  let bytes = 0;
  for (const entry of entries) {
    const size = entrySize(entry);
    if (current.length === MAX_BATCH_ENTRIES || (current.length > 0 && bytes + size > MAX_ENTRY_BYTES)) {
      calls.push(current);
      current = [];
      bytes = 0;
    }
    current.push(entry);
    bytes += size;
  }
  if (current.length > 0) calls.push(current);
  return calls;
}

async function putEvents(
  client: EventBridgeClient,
  eventBusName: string,
  batch: BusEntry[],
): Promise<PublishResult[]> {
  try {
    const output = await client.send(
      new PutEventsCommand({ Entries: batch.map((entry) => ({ ...entry, EventBusName: eventBusName })) }),
    );
    return batch.map((_, i): PublishResult => {
      const result = output.Entries?.[i];
      if (result?.EventId !== undefined && result.ErrorCode === undefined) {
        return { ok: true, eventId: result.EventId };
      }
      return {
        ok: false,
        errorCode: result?.ErrorCode ?? 'MissingResult',
        errorMessage: result?.ErrorMessage ?? 'PutEvents returned no result for this entry',
      };
    });
  } catch (error) {
    const failure: PublishResult = {
      ok: false,
      errorCode: error instanceof Error ? error.name : 'Error',
      errorMessage: error instanceof Error ? error.message : String(error),
    };
    return batch.map(() => failure);
  }
}
