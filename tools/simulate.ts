import { once } from 'node:events';
import { Agent } from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import { type RowView, toRowView } from '../dashboard/views.js';
import { erasesOnDelete } from '../lib/config/erasure.js';
import { applyErasing } from '../lib/erasure/project.js';
import { isRowEvent, validEvent } from '../lib/events/index.js';
import type { Row } from '../lib/model/types.js';
import { httpRequest } from './http-client.js';
import { deadLettered, parkedCount, waitForDrain } from './runtime-queues.js';
import { createRealisticSender, type SenderStats } from './sender.js';
import { buildStream } from './stream.js';
export interface SimulationOptions {
  /** The receiver's webhook URL, e.g. http://127.0.0.1:3000/webhook. */
  url: string;
  /** The local admin API, e.g. http://127.0.0.1:3001. */
  adminUrl: string;
  secret?: string;
  events: number;
  rows: number;
  /** Percentage of events delivered twice (same EventId, same bytes). */
  duplicates?: number;
  shuffle?: boolean;
  concurrency?: number;
  /** ContextIdentifier of the run; a fresh one by default, so runs never share rows. */
  context?: string;
  prefix?: string;
  seed?: number;
  /** `all` mixes in every family of the catalogue (person, sale, list.*, y_*, ...); default `spec`. */
  families?: 'spec' | 'all';
  /** Extra headers on every delivery (X-Receiver-Token, ...). */
  headers?: Record<string, string>;
  /** How long to wait for the worker queues to drain. */
  drainTimeoutMs?: number;
  retryDelaysMs?: readonly [number, number];
  log?: (line: string) => void;
  /** Aborted (Ctrl-C): no new delivery is sent, and the report says what was, without checking rows. */
  signal?: AbortSignal;
}

export interface Mismatch {
  row: string;
  /** Fields that differ, or `missing` when the admin API has no such row. */
  fields: string[];
  expected: unknown;
  actual: unknown;
  /** Accepted events of the row that its history does not hold (what to look for in the queues' journal). */
  notInHistory?: string[];
  /** The row's history as recorded: order key, and a resend's or conflict's origin (to tell what was not counted). */
  history?: string[];
}

/** The sender's counters (without its per-POST latencies), then what the run checked and measured. */
export interface SimulationReport extends Omit<SenderStats, 'latencies'> {
  context: string;
  events: number;
  rows: number;
  deliveries: number;
  rowsChecked: number;
  mismatches: number;
  mismatchDetails: Mismatch[];
  drained: boolean;
  /** Stopped by `signal` before the end: the figures are those of what was sent, no row was checked. */
  interrupted: boolean;
  /** Messages that reached a worker queue's DLQ during the run (should be 0). */
  deadLettered: number;
  /** Deliveries parked during the run (answered 200, on the parked queue, not in a row). */
  parked: number;
  /** Accepted events per second, from the first POST until the queues were drained (rows written). */
  eventsPerSecond: number;
  /** Accepted deliveries per second while sending. */
  postsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  sendMs: number;
  drainMs: number;
  totalMs: number;
}

/**
 * Drives a running receiver like the CRM would: a realistic stream over many rows, sent by a sender
 * with the real one's retry and give-up rules, then checks through the admin API that every row ended
 * in the state that applying the accepted events in order gives (lib/projection's `apply`, and the
 * erasure of a deleted row of an ERASE_ON_DELETE entity, read from this process's environment as the
 * receiver reads it from its own).
 */
export async function runSimulation(options: SimulationOptions): Promise<SimulationReport> {
  const log = options.log ?? (() => undefined);
  const context = options.context ?? `Sim${Date.now().toString(36)}`;
  const concurrency = options.concurrency ?? 10;
  const stream = buildStream({
    events: options.events,
    rows: options.rows,
    context,
    duplicates: options.duplicates,
    shuffle: options.shuffle,
    seed: options.seed,
    families: options.families,
  });
  const sender = createRealisticSender({
    url: options.url,
    secret: options.secret,
    prefix: options.prefix,
    concurrency,
    headers: options.headers,
    retryDelaysMs: options.retryDelaysMs,
  });
  log(
    `sending ${stream.deliveries.length} deliveries (${options.events} events over ${stream.rows.length} rows` +
      `${options.shuffle ? ', shuffled' : ''}${options.duplicates ? `, ${options.duplicates}% duplicates` : ''})` +
      ` with ${concurrency} concurrent senders to ${options.url}`,
  );

  const deadLetteredBefore = await deadLettered(options.adminUrl);
  const parkedBefore = await parkedCount(options.adminUrl);
  const accepted = new Set<string>();
  const started = performance.now();
  let next = 0;
  const sending = Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < stream.deliveries.length && !options.signal?.aborted) {
        const delivery = stream.deliveries[next++]!;
        const outcome = await sender.deliver(delivery.body);
        if (outcome === 'accepted') accepted.add(delivery.eventId);
      }
    }),
  );
  // Interrupted: the deliveries under way (a receiver that does not answer holds them 10 s) are not awaited.
  await (options.signal === undefined ? sending : Promise.race([sending, aborted(options.signal)]));
  const sent = performance.now();
  sender.close();
  const interrupted = () => options.signal?.aborted === true;
  if (!interrupted())
    log(`sent in ${((sent - started) / 1000).toFixed(1)} s; waiting for the worker queues to drain`);

  const admin = new Agent({ keepAlive: true, maxSockets: 16 });
  try {
    const drained =
      !interrupted() &&
      (await waitForDrain(options.adminUrl, admin, options.drainTimeoutMs ?? 120_000, options.signal));
    const done = performance.now();
    // Interrupted: the receiver may be what went wrong, so the admin API is not asked again.
    const deadLetteredDuring = interrupted()
      ? 0
      : (await deadLettered(options.adminUrl)) - deadLetteredBefore;
    const parkedDuring = interrupted() ? 0 : (await parkedCount(options.adminUrl)) - parkedBefore;

    // The rows as applying every accepted event in timestamp order makes them.
    const expected = new Map<string, Row>();
    const byRow = new Map<string, string[]>();
    // The receiver erases a deleted row of an ERASE_ON_DELETE entity (same setting, same default).
    const erases = erasesOnDelete();
    for (const delivery of stream.inOrder) {
      byRow.set(delivery.rowKey, [...(byRow.get(delivery.rowKey) ?? []), delivery.eventId]);
      if (!accepted.has(delivery.eventId)) continue;
      const event = validEvent(JSON.parse(delivery.body));
      if (event === undefined || !isRowEvent(event))
        throw new Error(`simulated event is invalid: ${delivery.body}`);
      expected.set(delivery.rowKey, applyErasing(expected.get(delivery.rowKey), event, {}, erases));
    }

    const mismatchDetails: Mismatch[] = [];
    let mismatches = 0;
    const keys = interrupted() ? [] : [...expected.keys()];
    let cursor = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (cursor < keys.length) {
          const key = keys[cursor++]!;
          const want = JSON.parse(JSON.stringify(toRowView(expected.get(key)!))) as RowView;
          const answer = await httpRequest(
            'GET',
            `${options.adminUrl}/rows/${encodeURIComponent(want.context)}/${encodeURIComponent(want.entity)}/${want.primaryKey}`,
            {},
            undefined,
            { agent: admin },
          );
          const got = answer.status === 200 ? (JSON.parse(answer.body) as RowView) : undefined;
          if (got !== undefined && isDeepStrictEqual(got, want)) continue;
          mismatches++;
          if (mismatchDetails.length < 10) {
            const fields = got
              ? Object.keys(want).filter(
                  (field) => !isDeepStrictEqual(got[field as keyof RowView], want[field as keyof RowView]),
                )
              : ['missing'];
            const history = await httpRequest(
              'GET',
              `${options.adminUrl}/rows/${encodeURIComponent(want.context)}/${encodeURIComponent(want.entity)}/${want.primaryKey}/events`,
              {},
              undefined,
              { agent: admin },
            );
            const records =
              history.status === 200
                ? (JSON.parse(history.body) as Array<{
                    eventId: string;
                    seq?: string;
                    resendOf?: string;
                    conflictOf?: string;
                  }>)
                : [];
            const recorded = new Set(records.map((r) => r.eventId));
            const notInHistory = (byRow.get(key) ?? []).filter((id) => accepted.has(id) && !recorded.has(id));
            mismatchDetails.push({
              row: key,
              fields,
              expected: want,
              actual: got ?? answer.status,
              notInHistory,
              history: records.map(
                (r) =>
                  `${r.seq ?? r.eventId}${r.resendOf ? ` resendOf ${r.resendOf}` : ''}${r.conflictOf ? ` conflictOf ${r.conflictOf}` : ''}`,
              ),
            });
          }
        }
      }),
    );

    const latencies = [...sender.stats.latencies].sort((a, b) => a - b);
    const seconds = (ms: number) => Math.max(ms, 1) / 1000;
    return {
      context,
      events: stream.inOrder.length,
      rows: stream.rows.length,
      deliveries: stream.deliveries.length,
      sent: sender.stats.sent,
      accepted: sender.stats.accepted,
      retried: sender.stats.retried,
      discarded: sender.stats.discarded,
      notSent: sender.stats.notSent,
      failures: sender.stats.failures,
      ...(sender.stats.stoppedBy ? { stoppedBy: sender.stats.stoppedBy } : {}),
      rowsChecked: keys.length,
      mismatches,
      mismatchDetails,
      drained,
      interrupted: interrupted(),
      deadLettered: deadLetteredDuring,
      parked: parkedDuring,
      eventsPerSecond: round(accepted.size / seconds(done - started)),
      postsPerSecond: round(sender.stats.accepted / seconds(sent - started)),
      p50Ms: round(percentile(latencies, 0.5)),
      p99Ms: round(percentile(latencies, 0.99)),
      sendMs: Math.round(sent - started),
      drainMs: Math.round(done - sent),
      totalMs: Math.round(performance.now() - started),
    };
  } finally {
    admin.destroy();
  }
}

/** Resolves when `signal` is aborted (at once if it is). */
function aborted(signal: AbortSignal): Promise<unknown> {
  return signal.aborted ? Promise.resolve() : once(signal, 'abort');
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
