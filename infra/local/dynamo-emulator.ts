import { mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';

/** dynalite, in-process, persisted under a directory (LevelDB) so tables survive a restart. */
export interface DynamoEmulator {
  endpoint: string;
  port: number;
  close(): Promise<void>;
}

export interface DynamoEmulatorOptions {
  /** LevelDB directory; created when missing. */
  path: string;
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
}

type Dynalite = (options: {
  path?: string;
  createTableMs?: number;
  deleteTableMs?: number;
  updateTableMs?: number;
}) => Server;

const dynalite = createRequire(import.meta.url)('dynalite') as Dynalite;

export async function startDynamoEmulator(options: DynamoEmulatorOptions): Promise<DynamoEmulator> {
  const host = options.host ?? '127.0.0.1';
  mkdirSync(options.path, { recursive: true });
  const server = dynalite({ path: options.path, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://${host}:${port}`,
    port,
    /** Stops the server and closes the LevelDB store, which flushes it. */
    async close() {
      server.closeIdleConnections();
      await new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
    },
  };
}
