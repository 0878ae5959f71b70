import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteItemCommand, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { startDynamoEmulator } from '../../local/emulators/dynamo-emulator.js';
import { createTable } from '../../local/emulators/resources.js';
import { LOCAL_CREDENTIALS } from '../../local/http/port-guard.js';
import { foundUnder } from '../support/data-dir.js';

const path = mkdtempSync(join(tmpdir(), 'dynamo-erased-'));
afterAll(() => rmSync(path, { recursive: true, force: true }));

async function withEmulator(use: (client: DynamoDBClient) => Promise<void>): Promise<void> {
  const emulator = await startDynamoEmulator({ path });
  const client = new DynamoDBClient({
    endpoint: emulator.endpoint,
    region: 'us-east-1',
    credentials: { ...LOCAL_CREDENTIALS },
  });
  try {
    await use(client);
  } finally {
    client.destroy();
    await emulator.close();
  }
}

const put = (client: DynamoDBClient, id: string, data: string) =>
  client.send(new PutItemCommand({ TableName: 'items', Item: { id: { S: id }, data: { S: data } } }));

describe("the local DynamoDB's files", () => {
  it('hold no overwritten or deleted value after the next start (LevelDB compacted at start)', async () => {
    await withEmulator(async (client) => {
      await createTable(client, {
        TableName: 'items',
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      });
      await put(client, 'erased', 'Overwritten-Secret-Qazwsx');
      await put(client, 'erased', 'nothing personal');
      await put(client, 'deleted', 'Deleted-Secret-Edcrfv');
      await client.send(new DeleteItemCommand({ TableName: 'items', Key: { id: { S: 'deleted' } } }));
      await put(client, 'kept', 'Kept-Value-Tgbyhn');
    });
    const needles = ['Overwritten-Secret-Qazwsx', 'Deleted-Secret-Edcrfv', 'Kept-Value-Tgbyhn'];
    // Written, then overwritten or deleted: LevelDB's log still holds every version.
    expect(Object.keys(foundUnder(path, needles)).sort()).toEqual([...needles].sort());

    await withEmulator(async () => undefined);

    expect(Object.keys(foundUnder(path, needles))).toEqual(['Kept-Value-Tgbyhn']);
  });
});
