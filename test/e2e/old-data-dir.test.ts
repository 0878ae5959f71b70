import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadDefinitions } from '../../infra/definitions.js';
import { createTable } from '../../local/emulators/resources.js';
import { startDynalite } from '../support/dynamo.js';
import { type RuntimeProcess, spawnLocalRuntime } from '../support/local-runtime.js';

/** `npm start` on a DATA_DIR whose rows table an older version created, before the byRowSet index. */
const dataDir = mkdtempSync(join(tmpdir(), 'crm-local-old-'));
let runtime: RuntimeProcess | undefined;
afterAll(async () => {
  await runtime?.stop();
  rmSync(dataDir, { recursive: true, force: true });
}, 30_000);

/** The receiver's tables under DATA_DIR as an older version left them: the rows table without indexes. */
async function oldTables(): Promise<void> {
  const dynamo = await startDynalite({ path: join(dataDir, 'dynamodb') });
  for (const { key, createTableInput } of loadDefinitions({ stage: 'local' }).tables) {
    if (key !== 'rows') await createTable(dynamo.client, createTableInput);
    else
      await createTable(dynamo.client, {
        TableName: createTableInput.TableName,
        AttributeDefinitions: [{ AttributeName: 'rowKey', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'rowKey', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      });
  }
  await dynamo.close();
}

describe('npm start on a DATA_DIR from before the rows index', () => {
  it('says so in one line, with what to do, and starts', async () => {
    await oldTables();
    runtime = await spawnLocalRuntime({ dataDir });
    const lines = runtime.output().split('\n');
    expect(lines.filter((line) => line.includes('byRowSet'))).toEqual([
      `DATA_DIR ${dataDir} holds a rows table from before its byRowSet index, which dynalite cannot add: reconciliation cannot find rows deleted in the CRM here; to have it, start on a fresh DATA_DIR (move ${dataDir} aside or set DATA_DIR to a new directory)`,
    ]);
  }, 60_000);

  it('a fresh DATA_DIR has the index: no such line', async () => {
    const fresh = mkdtempSync(join(tmpdir(), 'crm-local-fresh-'));
    const started = await spawnLocalRuntime({ dataDir: fresh });
    const output = started.output();
    await started.stop();
    rmSync(fresh, { recursive: true, force: true });
    expect(output).toMatch(/^ready in /m);
    expect(output).not.toContain('byRowSet');
  }, 60_000);
});
