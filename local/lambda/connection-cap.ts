import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionCap {
  /** True while more than `max` connections are open: a request that arrives now is to be refused. */
  exceeded(): boolean;
}

/**
 * Holds `server` to `max` open connections without letting connections that send nothing take the
 * place of deliveries (slowloris): when a new connection makes one too many, the connection that has
 * waited longest without a request in progress (still sending its headers, or idle between
 * keep-alive requests) is closed to make room; when there is none, the one whose body has been
 * arriving longest (headers complete, then a body trickled to hold the place until the request
 * timeout). A connection whose whole request arrived is never closed; when every connection has one,
 * the newcomer is over the cap and `exceeded()` says so while it is open.
 */
export function capConnections(server: Server, max: number): ConnectionCap {
  /** Every open connection, with how many of its requests are in progress (pipelined ones count). */
  const open = new Map<Socket, number>();
  /** The connections with none in progress, longest waiting first (a Set keeps insertion order). */
  const waiting = new Set<Socket>();
  /** The latest request of each connection with one in progress, oldest first. */
  const latest = new Map<Socket, IncomingMessage>();
  const forget = (socket: Socket) => {
    open.delete(socket);
    waiting.delete(socket);
    latest.delete(socket);
  };
  /** The connection to close for a newcomer: idle longest, else the oldest body still arriving. */
  const evictable = (): Socket | undefined => {
    const [longest] = waiting;
    if (longest !== undefined) return longest;
    for (const [socket, req] of latest) if (!req.complete) return socket;
    return undefined;
  };

  server.on('connection', (socket: Socket) => {
    if (open.size >= max) {
      const victim = evictable();
      if (victim !== undefined) {
        forget(victim);
        victim.destroy();
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
    latest.delete(socket);
    latest.set(socket, req);
    res.once('close', () => {
      const left = (open.get(socket) ?? 1) - 1;
      if (!open.has(socket)) return;
      open.set(socket, left);
      if (latest.get(socket) === req) latest.delete(socket);
      if (left === 0) waiting.add(socket);
    });
  });
  return { exceeded: () => open.size > max };
}
