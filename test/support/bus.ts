import type { BusEntry } from '../../lib/bus/entry.js';
import type { EventPublisher, PublishResult } from '../../lib/bus/publisher.js';

/**
 * An in-memory {@link EventPublisher}: records every entry it accepts, in order, and fails the
 * entries `failNext` names (by EventId in the detail), once each, as PutEvents reports a failed entry.
 */
export class FakePublisher implements EventPublisher {
  readonly published: BusEntry[] = [];
  readonly calls: number[] = [];
  private readonly failing = new Set<string>();

  failNext(eventId: string): void {
    this.failing.add(eventId);
  }

  async publish(entries: readonly BusEntry[]): Promise<PublishResult[]> {
    this.calls.push(entries.length);
    return entries.map((entry) => {
      const eventId = String(JSON.parse(entry.Detail).EventId);
      if (this.failing.delete(eventId)) {
        return { ok: false, errorCode: 'InternalFailure', errorMessage: 'failed on cue' };
      }
      this.published.push(entry);
      return { ok: true, eventId: `bus-${this.published.length}` };
    });
  }

  /** The published details, parsed (only for assertions: the digits are checked on `Detail`). */
  details(): Array<Record<string, unknown>> {
    return this.published.map((entry) => JSON.parse(entry.Detail));
  }
}
