import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { runSimulation, type SimulationReport } from '../../infra/local/simulate.js';
import { spawnLocalRuntime } from '../support/local-runtime.js';
import { rawDynamoPutRate, rawSqsSendRate } from './local.js';

const SECRET = 'load-secret';

/** The load of issue 6: 20,000 events over 2,000 rows, 10 % duplicates, shuffled, 50 senders. */
export const LOAD = { events: 20_000, rows: 2_000, duplicates: 10, concurrency: 50 } as const;

export interface LoadRun {
  report: SimulationReport;
  readyMs: number;
  rawSqsSendPerSecond: number;
  rawDynamoPutPerSecond: number;
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
  options: { events?: number; rows?: number; log?: (line: string) => void } = {},
): Promise<LoadRun> {
  const started = performance.now();
  const dataDir = mkdtempSync(join(tmpdir(), 'crm-local-load-'));
  const runtime = await spawnLocalRuntime({ dataDir, env: { WEBHOOK_SECRET: SECRET } });
  try {
    const info = (await (await fetch(`${runtime.adminUrl}/info`)).json()) as {
      urls: { sqs: string; dynamodb: string };
    };
    const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
    const sqs = new SQSClient({ endpoint: info.urls.sqs, region: 'us-east-1', credentials });
    const dynamodb = new DynamoDBClient({ endpoint: info.urls.dynamodb, region: 'us-east-1', credentials });
    const rawSqsSendPerSecond = await rawSqsSendRate(sqs, 2000);
    const rawDynamoPutPerSecond = await rawDynamoPutRate(dynamodb, 2000);
    sqs.destroy();
    dynamodb.destroy();

    const report = await runSimulation({
      url: runtime.webhookUrl,
      adminUrl: runtime.adminUrl,
      secret: SECRET,
      events: options.events ?? LOAD.events,
      rows: options.rows ?? LOAD.rows,
      duplicates: LOAD.duplicates,
      shuffle: true,
      concurrency: LOAD.concurrency,
      seed: 20,
      drainTimeoutMs: 600_000,
      log: options.log,
    });
    const failures = [
      ...(report.mismatches > 0 ? [`${report.mismatches} mismatches`] : []),
      ...(report.discarded > 0 ? [`${report.discarded} discarded`] : []),
      ...(report.accepted < report.deliveries ? [`${report.deliveries - report.accepted} not accepted`] : []),
      ...(report.drained ? [] : ['the queues did not drain']),
      ...(report.deadLettered > 0 ? [`${report.deadLettered} dead-lettered`] : []),
    ];
    return {
      report,
      readyMs: runtime.readyMs,
      rawSqsSendPerSecond,
      rawDynamoPutPerSecond,
      totalMs: Math.round(performance.now() - started),
      failures,
    };
  } finally {
    await runtime.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
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
    'npm start → ready (ms)': run.readyMs,
  };
}
