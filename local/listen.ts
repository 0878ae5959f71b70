import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { IngestServer } from './lambda/ingest-server.js';
import type { LocalRuntimeOptions } from './runtime.js';
import { StartupError } from './startup-error.js';

/** The interface the admin API and the emulators bind, and the ingest's default. */
export const LOOPBACK = '127.0.0.1';

/** Both servers listening (the ingest on `host`, the admin API on loopback); their ports. */
export async function listenBoth(
  { ingest, admin }: { ingest: IngestServer; admin: Server },
  options: Pick<LocalRuntimeOptions, 'host' | 'port' | 'adminPort'>,
  undo: (() => unknown)[],
): Promise<[number, number]> {
  const listening = await Promise.allSettled([
    listen(ingest.server, options.port ?? 3000, options.host ?? LOOPBACK, 'PORT'),
    listen(admin, options.adminPort ?? 3001, LOOPBACK, 'ADMIN_PORT'),
  ]);
  if (ingest.server.listening) undo.push(() => ingest.close());
  if (admin.listening) undo.push(() => new Promise<void>((done) => admin.close(() => done())));
  const [ingestListening, adminListening] = listening;
  if (ingestListening.status === 'rejected') throw ingestListening.reason;
  if (adminListening.status === 'rejected') throw adminListening.reason;
  return [ingestListening.value, adminListening.value];
}

function listen(server: Server, port: number, host: string, variable: string): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const failed = (error: Error) => reject(portError(variable, port, error));
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolvePort((server.address() as AddressInfo).port);
    });
  });
}

/** A busy or forbidden port as one line naming the variable to change; other errors unchanged. */
export function portError(variable: string, port: number, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE')
    return new StartupError(
      `port ${port} is in use by another process: set ${variable} to a free port (0 picks one)`,
    );
  if (code === 'EACCES')
    return new StartupError(
      `port ${port} needs privileges: set ${variable} to a port above 1023 (0 picks one)`,
    );
  return error;
}
