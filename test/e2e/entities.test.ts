import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSampleBody } from '../../tools/samples.js';
import { runSimulation } from '../../tools/simulate.js';
import { adminJson, postDelivery, type RuntimeProcess, spawnLocalRuntime } from '../support/local-runtime.js';

/**
 * Every event the CRM sends, through `npm start`: a webhook subscribed to everything, and the replay
 * of what ENTITIES parked once the setting allows it.
 */
const SECRET = 'e2e-entities-secret';
const CONTEXT = 'CustEntities';
let dataDir: string;
let runtime: RuntimeProcess | undefined;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'crm-entities-e2e-'));
});

afterAll(async () => {
  await runtime?.stop();
  rmSync(dataDir, { recursive: true, force: true });
}, 30_000);

const admin = <T = unknown>(path: string, init?: RequestInit) => adminJson<T>(runtime!.adminUrl, path, init);

describe('npm start with every family of the catalogue', () => {
  it('parks what ENTITIES leaves out (200), and replays it once the setting allows it', async () => {
    runtime = await spawnLocalRuntime({
      dataDir,
      env: { WEBHOOK_SECRET: SECRET, ENTITIES: 'contact,activity' },
    });
    const body = buildSampleBody('person.created', { context: CONTEXT, primaryKey: 31 });
    const answer = await postDelivery(runtime.webhookUrl, body, SECRET);
    expect([answer.status, await answer.json()]).toEqual([
      200,
      { status: 'parked', eventId: body.EventId, reason: 'entity-not-enabled' },
    ]);
    expect((await admin<Array<{ reason: string }>>('/parked')).body.map((parked) => parked.reason)).toEqual([
      'entity-not-enabled',
    ]);
    await runtime.stop();

    runtime = await spawnLocalRuntime({ dataDir, env: { WEBHOOK_SECRET: SECRET } });
    expect(await admin('/parked/replay', { method: 'POST' })).toEqual({
      status: 200,
      body: { replayed: 1, kept: 0, keptBy: {}, complete: true },
    });
    await expect
      .poll(async () => (await admin(`/rows/${CONTEXT}/person/31`)).status, { timeout: 15_000 })
      .toBe(200);
    expect((await admin(`/rows/${CONTEXT}/person/31`)).body).toMatchObject({
      entity: 'person',
      status: 'active',
      lastEventId: body.EventId,
      fieldValues: body.FieldValues,
    });
    expect((await admin('/parked')).body).toEqual([]);
  }, 90_000);

  it('a webhook subscribed to everything: shuffled, with duplicates, every row equals its in-order projection', async () => {
    runtime ??= await spawnLocalRuntime({ dataDir, env: { WEBHOOK_SECRET: SECRET } });
    const report = await runSimulation({
      url: runtime.webhookUrl,
      adminUrl: runtime.adminUrl,
      secret: SECRET,
      families: 'all',
      events: 450,
      rows: 45,
      duplicates: 10,
      shuffle: true,
      concurrency: 10,
      seed: 13,
    });
    expect(report).toMatchObject({
      accepted: report.deliveries,
      discarded: 0,
      drained: true,
      mismatches: 0,
      deadLettered: 0,
    });
    expect(report.rowsChecked).toBe(45);
    const { body: parked } = await admin<unknown[]>('/parked');
    expect(parked).toEqual([]);
  }, 120_000);
});
