/**
 * Worker throughput against dynalite: events per second through `apply` and the DynamoDB store
 * (history put, row read, row conditional put, last-accepted update), next to dynalite's raw
 * conditional PutItem rate measured in the same run, so the ratio says what the worker's own cost is.
 * Both run with the same concurrency (lanes = the queue's Lambda concurrency; each lane owns its rows,
 * as a FIFO message group would).
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { RowEvent } from '../../lib/events/index.js';
import type { Row } from '../../lib/model/types.js';
import { apply } from '../../lib/projection.js';
import { processRowEvent } from '../../lib/workers/index.js';
import { startDynamoStore } from '../support/dynamo.js';
import { at, rowEvent, rowWorkerDeps } from '../support/workers.js';

const LANES = 10;
const ROWS_PER_LANE = 10;
const EVENTS_PER_ROW = 10;

/** created, then changed events, per row: the realistic shape of a contact's life. */
function streams(context: string): RowEvent[][] {
  return Array.from({ length: LANES }, (_, lane) =>
    Array.from({ length: ROWS_PER_LANE }, (_, r) => lane * ROWS_PER_LANE + r + 1).flatMap((primaryKey) =>
      Array.from({ length: EVENTS_PER_ROW }, (_, i) =>
        rowEvent(i === 0 ? 'contact.created' : 'contact.changed', { context, primaryKey, timestamp: at(i) }),
      ),
    ),
  );
}

async function timed(work: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await work();
  return (performance.now() - started) / 1000;
}

export async function benchWorkers(): Promise<Record<string, number | string>> {
  const { dynamo, tables, store } = await startDynamoStore();
  try {
    const deps = rowWorkerDeps(store);
    const meta = { messageId: 'bench' };

    // Pure apply, CPU only.
    const cpuEvents = streams('CustCpu').flat();
    const cpuSeconds = await timed(async () => {
      const rows = new Map<number, Row>();
      for (let round = 0; round < 10; round++) {
        rows.clear();
        for (const event of cpuEvents) rows.set(event.PrimaryKey, apply(rows.get(event.PrimaryKey), event));
      }
    });

    // One change naming n fields merged into a row that already names n others: one pass, linear in n.
    const wideMs = async (fields: number) => {
      const names = (prefix: string) => Array.from({ length: fields }, (_, i) => `${prefix}_${i}`);
      const change = (seconds: number, changes: string[]): RowEvent => ({
        ...rowEvent('contact.changed', { context: 'CustWide', primaryKey: fields, timestamp: at(seconds) }),
        Changes: changes,
      });
      const row = apply(undefined, change(1, names('old')));
      return (await timed(async () => void apply(row, change(2, names('new'))))) * 1000;
    };
    await wideMs(20_000); // warm-up
    const wide2k = await wideMs(2_000);
    const wide20k = await wideMs(20_000);

    // Warm-up: connections, table creation paths, JIT.
    for (const event of streams('CustWarm')[0]!.slice(0, 40)) await processRowEvent(deps, event, meta);

    // Raw: one conditional PutItem per item, of a stored row's size.
    const sample = (await store.getRow('CustWarm', 'contact', 1))!;
    const rawPerLane = ROWS_PER_LANE * EVENTS_PER_ROW;
    const rawSeconds = await timed(async () => {
      await Promise.all(
        Array.from({ length: LANES }, async (_, lane) => {
          for (let i = 0; i < rawPerLane; i++) {
            await dynamo.doc.send(
              new PutCommand({
                TableName: tables.rows,
                Item: { ...sample, rowKey: `raw#${lane}#${i}`, version: 1 },
                ConditionExpression: 'attribute_not_exists(rowKey)',
              }),
            );
          }
        }),
      );
    });

    // Worker: every event through processRowEvent, rows in order within a lane.
    const lanes = streams('CustBench');
    const workerSeconds = await timed(async () => {
      await Promise.all(
        lanes.map(async (events) => {
          for (const event of events) await processRowEvent(deps, event, meta);
        }),
      );
    });

    const events = LANES * ROWS_PER_LANE * EVENTS_PER_ROW;
    const rawPerSecond = events / rawSeconds;
    const workerPerSecond = events / workerSeconds;
    return {
      'workers: events': events,
      'workers: lanes (concurrent FIFO groups)': LANES,
      'workers: apply() events/s (CPU only)': Math.round((cpuEvents.length * 10) / cpuSeconds),
      'workers: dynalite raw conditional PutItem/s': Math.round(rawPerSecond),
      'workers: apply + store events/s': Math.round(workerPerSecond),
      'workers: requests per event (3 writes, 1 read)': 4,
      'workers: events/s ÷ raw puts/s': (workerPerSecond / rawPerSecond).toFixed(2),
      'workers: apply() of 2,000 Changes (ms)': wide2k.toFixed(1),
      'workers: apply() of 20,000 Changes (ms)': wide20k.toFixed(1),
      'workers: 20,000 ÷ 2,000 Changes (10: linear)': (wide20k / wide2k).toFixed(1),
    };
  } finally {
    await dynamo.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const [key, value] of Object.entries(await benchWorkers())) console.log(`${key.padEnd(50)} ${value}`);
}
