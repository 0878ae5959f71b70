import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll } from 'vitest';
import { loadDefinitions } from '../../infra/definitions.js';
import type { Gap } from '../../lib/model/types.js';
import { createDynamoStore } from '../../lib/store/index.js';
import type { Store, StoreReader } from '../../lib/store/types.js';
import { gapsOf } from '../../lib/webhook-state.js';
import { createTable } from '../../local/emulators/resources.js';

type Dynalite = (options: {
  path?: string;
  createTableMs?: number;
  deleteTableMs?: number;
  updateTableMs?: number;
}) => Server;
const dynalite = createRequire(import.meta.url)('dynalite') as Dynalite;

export const FAKE_AWS_ENV = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'x',
  AWS_SECRET_ACCESS_KEY: 'x',
} as const;

export interface TableNames {
  rows: string;
  events: string;
  webhooks: string;
}

export interface LocalDynamo {
  endpoint: string;
  client: DynamoDBClient;
  doc: DynamoDBDocumentClient;
  /** Creates the receiver's three tables from infra/resources.yml under a fresh stage name. */
  createTables(): Promise<TableNames>;
  close(): Promise<void>;
}

/**
 * dynalite as published on an ephemeral loopback port, with SDK clients pointed at it: in memory, or
 * with `path` in its own LevelDB store there.
 */
export async function startDynalite(options: { path?: string } = {}): Promise<LocalDynamo> {
  const server = dynalite({ ...options, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({
    endpoint,
    region: FAKE_AWS_ENV.AWS_REGION,
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
  });
  const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  return {
    endpoint,
    client,
    doc,
    async createTables() {
      const stage = `t${randomUUID().slice(0, 8)}`;
      const { tables } = loadDefinitions({ stage });
      for (const table of tables) {
        await createTable(client, table.createTableInput);
        if (table.ttlAttribute !== undefined) {
          await client
            .send(
              new UpdateTimeToLiveCommand({
                TableName: table.name,
                TimeToLiveSpecification: { AttributeName: table.ttlAttribute, Enabled: true },
              }),
            )
            .catch(() => undefined); // dynalite has no TTL API; the attribute is still written and asserted
        }
      }
      const name = (key: string): string => tables.find((table) => table.key === key)!.name;
      return { rows: name('rows'), events: name('events'), webhooks: name('webhooks') };
    },
    async close() {
      client.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface DynamoStore {
  dynamo: LocalDynamo;
  tables: TableNames;
  store: Store;
}

/** A dynalite with fresh tables and the receiver's store on them (30 days of history; `now`, the store's clock). */
export async function startDynamoStore(options: { now?: () => Date } = {}): Promise<DynamoStore> {
  const dynamo = await startDynalite();
  const tables = await dynamo.createTables();
  const store = createDynamoStore({ client: dynamo.doc, tables, retentionDays: 30, ...options });
  return { dynamo, tables, store };
}

/**
 * {@link startDynamoStore} for a file's tests: started before them, stopped after. Its fields are
 * there once the tests run: `const db = dynamoStoreForFile();`, then `db.store` in a test.
 */
export function dynamoStoreForFile(options: { now?: () => Date } = {}): DynamoStore {
  const world = {} as DynamoStore;
  beforeAll(async () => {
    Object.assign(world, await startDynamoStore(options));
  });
  afterAll(() => world.dynamo?.close());
  return world;
}

/** The gap windows of the webhooks of `context` (or of all), as the admin API's `GET /gaps` lists them. */
export async function gapsIn(store: Pick<StoreReader, 'listWebhooks'>, context?: string): Promise<Gap[]> {
  return (await store.listWebhooks(context)).flatMap(gapsOf);
}
