import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { handleDelivery } from '../../lib/ingest/index.js';
import type { ReconcileQueue, ReconcileRequest } from '../../lib/reconcile/request.js';
import { policy, RecordingQueue } from './delivery.js';

/**
 * The receiver's endpoint on a real socket: the real ingest (decide, signature check, a queue that
 * keeps what it is sent) behind it, or 503 as an endpoint being deployed or throttled answers.
 */
export async function startReceiver() {
  const queue = new RecordingQueue();
  const tests: string[] = [];
  /** `down`: every delivery answered 503; `failNext`: that many more. */
  const state = { down: false, failNext: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      if (state.down || state.failNext > 0) {
        if (!state.down) state.failNext--;
        res.statusCode = 503;
        res.end();
        return;
      }
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers))
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(',') : value;
      const answer = await handleDelivery(
        {
          method: req.method ?? 'POST',
          headers,
          query: {},
          body: Buffer.concat(chunks),
          receivedAt: new Date(),
        },
        policy(),
        queue,
      );
      if (answer.decision.kind === 'test') tests.push(headers['x-superoffice-event'] ?? 'test');
      res.statusCode = answer.status;
      res.end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`;
  return {
    url,
    queue,
    /** The registration checks (`test` deliveries) the ingest answered 200. */
    tests,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A reconcile queue port in front of `inner` that also counts what it was asked to send. */
export function countingQueue(inner?: ReconcileQueue) {
  const requests: ReconcileRequest[] = [];
  const queue: ReconcileQueue = {
    async enqueue(request) {
      requests.push(request);
      await inner?.enqueue(request);
    },
  };
  return { queue, requests };
}
