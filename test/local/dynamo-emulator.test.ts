import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteItemCommand, DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { type DynamoEmulator, startDynamoEmulator } from '../../local/emulators/dynamo-emulator.js';
import { createTable } from '../../local/emulators/resources.js';
import { LOCAL_CREDENTIALS } from '../../local/http/port-guard.js';
import { StartupError } from '../../local/startup-error.js';
import { startDynalite } from '../support/dynamo.js';

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
    credentials: { ...LOCAL_CREDENTIALS },
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
    const published = await startDynalite({ path });
    await createItemsTable(published.client);
    await put(published.client, 'kept', 7);
    await published.close();

    await withEmulator(path, async (emulated) => {
      expect(await versionOf(emulated, 'kept')).toBe(7);
    });
  });

  it('gives binary and non-ASCII attributes back byte for byte after a restart', async () => {
    const path = directory();
    const bytes = Uint8Array.from([0, 255, 128, 10, 13, 195]);
    const text = 'ключ 😀 \u2028 \u0000 end';
    await withEmulator(path, async (client) => {
      await createItemsTable(client);
      await client.send(
        new PutItemCommand({
          TableName: 'items',
          Item: { id: { S: text }, b: { B: bytes }, s: { S: text } },
        }),
      );
    });
    await withEmulator(path, async (client) => {
      const { Item } = await client.send(
        new GetItemCommand({ TableName: 'items', Key: { id: { S: text } }, ConsistentRead: true }),
      );
      expect(Item?.s?.S).toBe(text);
      expect(Item?.b?.B).toEqual(bytes);
    });
  });

  it('refuses to start, in one line naming the directory and the reason, when its tables cannot be opened', async () => {
    const path = directory();
    // Another holder of the LevelDB directory (its LOCK).
    const fromDynalite = createRequire(createRequire(import.meta.url).resolve('dynalite'));
    const { Level } = fromDynalite('level') as {
      Level: new (path: string) => { open(): Promise<void>; close(): Promise<void> };
    };
    const holder = new Level(path);
    await holder.open();
    try {
      const error = await startDynamoEmulator({ path }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(StartupError);
      expect((error as Error).message).toContain(`cannot open the DynamoDB tables under ${path}`);
      expect((error as Error).message).toMatch(/lock/i);
      expect((error as Error).message).not.toContain('\n');
    } finally {
      await holder.close();
    }
  });

  it('says a busy port with its code, so npm start can name the setting', async () => {
    const path = directory();
    const first = await startDynamoEmulator({ path, port: 0 });
    try {
      await expect(startDynamoEmulator({ path: directory(), port: first.port })).rejects.toMatchObject({
        code: 'EADDRINUSE',
      });
    } finally {
      await first.close();
    }
  });
});
