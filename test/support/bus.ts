import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BusEntry } from '../../lib/bus/entry.js';
import type { EventPublisher, PublishResult } from '../../lib/bus/publisher.js';
import { startRecorder } from './http-server.js';

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

const journalDirs: string[] = [];

/** A path for a local bus's journal, in a fresh temporary directory ({@link removeJournals} deletes them). */
export function tempJournal(): string {
  const dir = mkdtempSync(join(tmpdir(), 'crm-bus-journal-'));
  journalDirs.push(dir);
  return join(dir, 'bus-journal.ndjson');
}

export function removeJournals(): void {
  for (const dir of journalDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export interface TargetRequest {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface StatusTarget {
  url: string;
  /** Every request, in the order they ended. */
  received: TargetRequest[];
  close(): Promise<void>;
}

/** A real HTTP target on 127.0.0.1 answering `statuses` in turn, then its last one for good. */
export async function statusTarget(...statuses: number[]): Promise<StatusTarget> {
  const target = await startRecorder(
    ({ headers, body }): TargetRequest => ({ headers, body }),
    (_, count) => statuses[Math.min(count, statuses.length) - 1] ?? 200,
  );
  return { url: `${target.url}/hook`, received: target.received, close: target.close };
}
