import { createServer, type Socket } from 'node:net';

export interface SilentCrm {
  /** A CRM_API_URL on it: `http://127.0.0.1:<port>/{ContextIdentifier}/api/v1`. */
  apiUrl: string;
  /** Connections accepted so far (a request in flight at it). */
  connections(): number;
  close(): Promise<void>;
}

/**
 * A CRM that accepts connections and never answers (a real socket, not a mock): a runtime pointed at
 * it has reconciliation on, and a request its reconcile function takes stays in flight on the queue
 * as long as CRM_TIMEOUT_MS allows.
 */
export async function startSilentCrm(): Promise<SilentCrm> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    apiUrl: `http://127.0.0.1:${port}/{ContextIdentifier}/api/v1`,
    connections: () => accepted,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
