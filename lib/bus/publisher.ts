import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { type BatchLimits, batches } from '../batches.js';
import { type BusEntry, entrySize, MAX_ENTRY_BYTES } from './entry.js';

/** How one entry fared: EventBridge's event id, or its error code (one failed entry fails one record). */
export type PublishResult =
  | { ok: true; eventId: string }
  | { ok: false; errorCode: string; errorMessage: string };

/** The port the workers publish through: one result per entry, in the entries' order. */
export interface EventPublisher {
  publish(entries: readonly BusEntry[]): Promise<PublishResult[]>;
}

/** EventBridge's limits on one PutEvents call: 10 entries, 256 KB of entries. */
const PUT_EVENTS: BatchLimits<BusEntry> = { count: 10, bytes: MAX_ENTRY_BYTES, size: entrySize };

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
      for (const batch of batches(entries, PUT_EVENTS)) {
        results.push(...(await putEvents(client, eventBusName, batch)));
      }
      return results;
    },
  };
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
