import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteItemCommand, DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { type DynamoEmulator, startDynamoEmulator } from '../../infra/local/dynamo-emulator.js';
import { createTable } from '../../infra/local/resources.js';

const dirs: string[] = [];
const directory = () => {
  const dir = mkdtempSync(join(tmpdir(), 'dynamo-emulator-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const clientOf = (endpoint: string) =>
  new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
  });

const createItemsTable = (client: DynamoDBClient) =>
  createTable(client, {
    TableName: 'items',
    AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
    KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
    BillingMode: 'PAY_PER_REQUEST',
  });

const put = (client: DynamoDBClient, id: string, version: number) =>
  client.send(
    new PutItemCommand({ TableName: 'items', Item: { id: { S: id }, version: { N: String(version) } } }),
  );

async function versionOf(client: DynamoDBClient, id: string): Promise<number | undefined> {
  const { Item } = await client.send(
    new GetItemCommand({ TableName: 'items', Key: { id: { S: id } }, ConsistentRead: true }),
  );
  return Item?.version?.N === undefined ? undefined : Number(Item.version.N);
}

async function withEmulator<T>(path: string, use: (client: DynamoDBClient) => Promise<T>): Promise<T> {
  const emulator: DynamoEmulator = await startDynamoEmulator({ path });
  const client = clientOf(emulator.endpoint);
  try {
    return await use(client);
  } finally {
    client.destroy();
    await emulator.close();
  }
}

describe('startDynamoEmulator', () => {
  it('keeps tables and items, overwrites and deletes included, across a restart on the same directory', async () => {
    const path = directory();
    await withEmulator(path, async (client) => {
      await createItemsTable(client);
      for (let version = 1; version <= 50; version++) await put(client, 'a', version);
      await put(client, 'b', 1);
      await put(client, 'c', 1);
      await client.send(new DeleteItemCommand({ TableName: 'items', Key: { id: { S: 'c' } } }));
    });
    await withEmulator(path, async (client) => {
      expect(await versionOf(client, 'a')).toBe(50);
      expect(await versionOf(client, 'b')).toBe(1);
      expect(await versionOf(client, 'c')).toBeUndefined();
      // Conditional writes check the state the directory gave back.
      await expect(
        client.send(
          new PutItemCommand({
            TableName: 'items',
            Item: { id: { S: 'a' }, version: { N: '51' } },
            ConditionExpression: 'version = :v',
            ExpressionAttributeValues: { ':v': { N: '49' } },
          }),
        ),
      ).rejects.toThrow(/conditional request failed/i);
    });
  });

  it("opens a directory written by dynalite's own LevelDB store (the format earlier versions left in DATA_DIR)", async () => {
    const path = directory();
    const dynalite = createRequire(import.meta.url)('dynalite') as (options: object) => Server;
    const server = dynalite({ path, createTableMs: 0 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('dynalite has no port');
    const client = clientOf(`http://127.0.0.1:${address.port}`);
    await createItemsTable(client);
    await put(client, 'kept', 7);
    client.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve, reject) =>
      server.close((error) => (error ? reject(error) : resolve())),
    );

    await withEmulator(path, async (emulated) => {
      expect(await versionOf(emulated, 'kept')).toBe(7);
    });
  });
});
