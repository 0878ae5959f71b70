import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createTable } from '../../local/emulators/resources.js';
import { runSimulation, type SimulationReport } from '../../tools/simulate.js';
import { spawnLocalRuntime } from '../support/local-runtime.js';

const SECRET = 'load-secret';
const CONCURRENCY = 50;
/** Raw conditional puts measured against dynalite before the load. */
const RAW_PUTS = 2000;

/** The load run: 20,000 events over 2,000 rows, 10 % duplicates, shuffled, 50 senders. */
export const LOAD = { events: 20_000, rows: 2_000, duplicates: 10, concurrency: 50 } as const;

export interface LoadRun {
  report: SimulationReport;
  readyMs: number;
  /** What the runtime's own ready line says (process start to ready), when it printed one. */
  readyLineMs: number | undefined;
  rawSqsSendPerSecond: number;
  rawDynamoPutPerSecond: number;
  /** CPU the runtime (every thread of its process) spent per raw conditional put, in ms. */
  cpuMsPerPut: number;
  /** CPU the runtime spent per event of the simulation (send and drain), in ms. */
  cpuMsPerEvent: number;
  /** CPU this process (the 50 senders) spent per event, in ms: it shares the machine's cores. */
  senderCpuMsPerEvent: number;
  totalMs: number;
  /** Why the run fails the load criteria (mismatches, discarded, ...); empty when it passes. */
  failures: string[];
}

/**
 * `npm start` in a child process (fresh DATA_DIR, free ports), the emulators' raw rates measured
 * against its own emulators, then `simulate` with the load above; the run passes only with every
 * delivery accepted, none discarded, the queues drained, nothing dead-lettered and zero mismatches.
 */
export async function runLoad(
  options: {
    events?: number;
    rows?: number;
    duplicates?: number;
    seed?: number;
    log?: (line: string) => void;
  } = {},
): Promise<LoadRun> {
  const started = performance.now();
  const dataDir = mkdtempSync(join(tmpdir(), 'crm-local-load-'));
  const runtime = await spawnLocalRuntime({ dataDir, env: { WEBHOOK_SECRET: SECRET } });
  try {
    /** The runtime's /info: its emulators' URLs and the CPU its process has used so far. */
    const getInfo = async () =>
      (await (await fetch(`${runtime.adminUrl}/info`)).json()) as {
        urls: { sqs: string; dynamodb: string };
        cpuMs: number;
      };
    const info = await getInfo();
    const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
    const sqs = new SQSClient({ endpoint: info.urls.sqs, region: 'us-east-1', credentials });
    const dynamodb = new DynamoDBClient({ endpoint: info.urls.dynamodb, region: 'us-east-1', credentials });
    const rawSqsSendPerSecond = await rawSqsSendRate(sqs, 2000);
    const beforePuts = (await getInfo()).cpuMs;
    const rawDynamoPutPerSecond = await rawDynamoPutRate(dynamodb, RAW_PUTS);
    const cpuMsPerPut = ((await getInfo()).cpuMs - beforePuts) / RAW_PUTS;
    sqs.destroy();
    dynamodb.destroy();

    const beforeEvents = (await getInfo()).cpuMs;
    const senderBefore = process.cpuUsage();

    const report = await runSimulation({
      url: runtime.webhookUrl,
      adminUrl: runtime.adminUrl,
      secret: SECRET,
      events: options.events ?? LOAD.events,
      rows: options.rows ?? LOAD.rows,
      duplicates: options.duplicates ?? LOAD.duplicates,
      shuffle: true,
      concurrency: LOAD.concurrency,
      seed: options.seed ?? 20,
      drainTimeoutMs: 600_000,
      log: options.log,
    });
    const cpuMsPerEvent = ((await getInfo()).cpuMs - beforeEvents) / report.events;
    const sender = process.cpuUsage(senderBefore);
    const senderCpuMsPerEvent = (sender.user + sender.system) / 1000 / report.events;
    const failures = [
      ...(report.mismatches > 0 ? [`${report.mismatches} mismatches`] : []),
      ...(report.discarded > 0 ? [`${report.discarded} discarded`] : []),
      ...(report.accepted < report.deliveries ? [`${report.deliveries - report.accepted} not accepted`] : []),
      ...(report.drained ? [] : ['the queues did not drain']),
      ...(report.deadLettered > 0 ? [`${report.deadLettered} dead-lettered`] : []),
      ...(report.parked > 0 ? [`${report.parked} parked`] : []),
      ...payloadInLogs(runtime.output()),
    ];
    // An accepted event missing from its row's history: what the queues' journal says of it.
    const journal = join(dataDir, 'sqs-journal.ndjson');
    const missing = report.mismatchDetails.flatMap((mismatch) => mismatch.notInHistory ?? []);
    if (missing.length > 0 && existsSync(journal)) {
      const lines = readFileSync(journal, 'utf8').split('\n');
      for (const eventId of missing) {
        // Its put (the body names the EventId), then its receives and delete (by MessageId).
        const puts = lines.filter((line) => line.includes(eventId));
        const ids = puts.flatMap((line) => /"MessageId":"([^"]+)"/.exec(line)?.[1] ?? []);
        const later = lines.filter((line) => !line.includes(eventId) && ids.some((id) => line.includes(id)));
        const shown = [...puts, ...later].map((line) => line.slice(0, 240));
        // The journal is compacted to the live messages once it passes 64 MB (about one full run), so a
        // message deleted before that leaves no line: "none" then says nothing about it.
        options.log?.(
          `journal lines for ${eventId}: ${shown.length === 0 ? 'none (or deleted before the journal was last compacted)' : shown.join(' | ')}`,
        );
      }
    }
    // What the runtime itself said about a failed run: its warnings and errors (a retried merge, a
    // failed record, a resend or conflict), the last of what it printed.
    if (failures.length > 0) {
      const said = runtime
        .output()
        .split('\n')
        .filter((line) => /"level":"(WARN|ERROR|CRITICAL)"|Error|error/.test(line));
      for (const line of said.slice(-200)) options.log?.(`runtime: ${line.slice(0, 600)}`);
    }
    return {
      report,
      readyMs: runtime.readyMs,
      readyLineMs: Number(/ready in (\d+) ms/.exec(runtime.output())?.[1] ?? Number.NaN) || undefined,
      rawSqsSendPerSecond,
      rawDynamoPutPerSecond,
      cpuMsPerPut,
      cpuMsPerEvent,
      senderCpuMsPerEvent,
      totalMs: Math.round(performance.now() - started),
      failures,
    };
  } finally {
    await runtime.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * What the runtime printed that carries a delivery's payload: a line naming FieldValues, Values or
 * Changes, or holding the samples' own FieldValues text (their `registered` time, which nothing else
 * prints). Logs carry keys, event names and counts only (docs/privacy.md).
 */
export function payloadInLogs(output: string): string[] {
  const needles = ['"FieldValues"', '"Values"', '"Changes"', '16:11:02.4593434'];
  const lines = output.split('\n').filter((line) => needles.some((needle) => line.includes(needle)));
  return lines.length === 0 ? [] : [`${lines.length} log lines carry a payload`];
}

/** Local events/s over dynalite's raw conditional-put rate in the same run . */
export const ratio = (run: LoadRun): string =>
  (run.report.eventsPerSecond / Math.max(1, run.rawDynamoPutPerSecond)).toFixed(2);

/**
 * The best that ratio can be on this machine's cores: every core busy with the runtime at the CPU an
 * event costs it (`withSenders`: and with the senders' CPU, which share the cores here), divided by
 * the raw put rate measured in the same run.
 */
export function ratioCeiling(run: LoadRun, withSenders = false): string {
  const cpuMs = run.cpuMsPerEvent + (withSenders ? run.senderCpuMsPerEvent : 0);
  const eventsPerSecond = (availableParallelism() * 1000) / Math.max(cpuMs, 0.001);
  return (eventsPerSecond / Math.max(1, run.rawDynamoPutPerSecond)).toFixed(2);
}

/**
 * The same ceiling from CPU alone, free of the shared machine's noise in the raw rate: dynalite serves
 * the raw puts on one thread, so at best one core's worth, 1000 ÷ (CPU-ms per put) puts/s; the ratio
 * can then be at most cores × (CPU per put) ÷ (CPU per event).
 */
export function cpuRatioCeiling(run: LoadRun): string {
  return ((availableParallelism() * run.cpuMsPerPut) / Math.max(run.cpuMsPerEvent, 0.001)).toFixed(2);
}

/** `npm run bench -- load`: the figures; a failed run sets a non-zero exit code. */
export async function benchLoad(): Promise<Record<string, number | string>> {
  const run = await runLoad();
  const { report } = run;
  if (run.failures.length > 0) process.exitCode = 1;
  return {
    verdict: run.failures.length === 0 ? 'pass' : `FAIL: ${run.failures.join(', ')}`,
    'events / rows / deliveries': `${report.events} / ${report.rows} / ${report.deliveries}`,
    'sent / accepted / retried / discarded': `${report.sent} / ${report.accepted} / ${report.retried} / ${report.discarded}`,
    mismatches: report.mismatches,
    'dead-lettered': report.deadLettered,
    'local e2e events/s (POST → row written)': report.eventsPerSecond,
    'POSTs/s while sending (50 senders)': report.postsPerSecond,
    'POST latency p50 / p99 (ms)': `${report.p50Ms} / ${report.p99Ms}`,
    'send + drain (s)': `${(report.sendMs / 1000).toFixed(1)} + ${(report.drainMs / 1000).toFixed(1)}`,
    'raw local-aws-sqs SendMessage/s (50 conc.)': run.rawSqsSendPerSecond,
    'raw dynalite PutItem/s (50 conc.)': run.rawDynamoPutPerSecond,
    'events/s ÷ dynalite puts/s': ratio(run),
    'runtime CPU-ms per event / per raw put': `${run.cpuMsPerEvent.toFixed(2)} / ${run.cpuMsPerPut.toFixed(2)}`,
    'senders’ CPU-ms per event (this process)': run.senderCpuMsPerEvent.toFixed(2),
    [`ratio ceiling on ${availableParallelism()} cores (+ senders)`]: `${ratioCeiling(run)} (${ratioCeiling(run, true)})`,
    'the same, raw puts at one full core (CPU only)': cpuRatioCeiling(run),
    'npm start → ready (ms)': run.readyMs,
  };
}

/** SendMessage/s of local-aws-sqs on a scratch FIFO queue, CONCURRENCY at a time. */
export async function rawSqsSendRate(client: SQSClient, count: number): Promise<number> {
  const { QueueUrl } = await client.send(
    new CreateQueueCommand({ QueueName: 'bench-raw.fifo', Attributes: { FifoQueue: 'true' } }),
  );
  const body = 'x'.repeat(2048);
  return rate(count, (i) =>
    client.send(
      new SendMessageCommand({
        QueueUrl,
        MessageBody: body,
        MessageGroupId: `g${i % 200}`,
        MessageDeduplicationId: `m${i}`,
      }),
    ),
  );
}

/** Conditional PutItem/s of dynalite on a scratch table, CONCURRENCY at a time. */
export async function rawDynamoPutRate(client: DynamoDBClient, count: number): Promise<number> {
  await createTable(client, {
    TableName: 'bench-raw',
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
    BillingMode: 'PAY_PER_REQUEST',
  });
  const payload = 'x'.repeat(1024);
  return rate(count, (i) =>
    client.send(
      new PutItemCommand({
        TableName: 'bench-raw',
        Item: { pk: { S: `row#${i}` }, payload: { S: payload }, version: { N: '1' } },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    ),
  );
}

/** Operations per second of `count` calls, CONCURRENCY at a time. */
async function rate(count: number, call: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) await call(next++);
    }),
  );
  return Math.round(count / ((performance.now() - started) / 1000));
}
