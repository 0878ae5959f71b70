import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionCap {
  /** True while more than `max` connections are open: a request that arrives now is to be refused. */
  exceeded(): boolean;
}

/**
 * Holds `server` to `max` open connections without letting connections that send nothing take the
 * place of deliveries (slowloris): when a new connection makes one too many, the connection that has
 * waited longest without a request in progress (still sending its headers, or idle between
 * keep-alive requests) is closed to make room. A connection whose request is being read or answered
 * is never closed; when every connection has one, the newcomer is over the cap and `exceeded()` says
 * so while it is open.
 */
export function capConnections(server: Server, max: number): ConnectionCap {
  /** Every open connection, with how many of its requests are in progress (pipelined ones count). */
  const open = new Map<Socket, number>();
  /** The connections with none in progress, longest waiting first (a Set keeps insertion order). */
  const waiting = new Set<Socket>();
  const forget = (socket: Socket) => {
    open.delete(socket);
    waiting.delete(socket);
  };

  server.on('connection', (socket: Socket) => {
    if (open.size >= max) {
      const [longest] = waiting;
      if (longest !== undefined) {
        forget(longest);
        longest.destroy();
      }
    }
    open.set(socket, 0);
    waiting.add(socket);
    socket.once('close', () => forget(socket));
  });
  server.on('request', (req, res) => {
    const socket = req.socket;
    if (!open.has(socket)) return;
    open.set(socket, open.get(socket)! + 1);
    waiting.delete(socket);
    res.once('close', () => {
      const left = (open.get(socket) ?? 1) - 1;
      if (!open.has(socket)) return;
      open.set(socket, left);
      if (left === 0) waiting.add(socket);
    });
  });
  return { exceeded: () => open.size > max };
}
