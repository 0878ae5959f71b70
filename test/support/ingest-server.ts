import type { Decision } from '../../lib/ingest/decision.js';
import { handleDelivery } from '../../lib/ingest/index.js';
import type { DeliveryPolicy } from '../../lib/ingest/request.js';
import { policy, RecordingQueue } from './delivery.js';
import { startServer } from './http-server.js';

/** One delivery the ingest answered: its event, the status, the decision's kind, and why when refused. */
export interface Answered {
  event: string;
  eventId: string;
  status: number;
  kind: Decision['kind'];
  reason?: string;
}

/**
 * The receiver's endpoint on a real socket (`url`, its `/webhook`): the real ingest (decide, signature
 * check, route) with `policyOf`'s policy (default the tests' `policy()`) and a queue that keeps what it
 * is sent, every answer recorded; or 503, unanswered by the ingest, as an endpoint being deployed or
 * throttled answers (`state`).
 */
export async function startIngestServer(policyOf: () => DeliveryPolicy | Promise<DeliveryPolicy> = policy) {
  const queue = new RecordingQueue();
  const answered: Answered[] = [];
  /** `down`: every delivery answered 503; `failNext`: that many more. */
  const state = { down: false, failNext: 0 };
  const server = await startServer((req, res) => {
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
      const request = { method: req.method ?? 'POST', headers, query: {}, body: Buffer.concat(chunks) };
      const answer = await handleDelivery({ ...request, receivedAt: new Date() }, await policyOf(), queue);
      const { decision } = answer;
      answered.push({
        event: headers['x-superoffice-event'] ?? '',
        eventId: headers['x-superoffice-eventid'] ?? '',
        status: answer.status,
        kind: decision.kind,
        ...(decision.kind === 'reject' && { reason: decision.reason }),
      });
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body);
    });
  });
  return {
    url: `${server.url}/webhook`,
    queue,
    answered,
    state,
    /** The registration checks (`test` deliveries) the ingest answered 200. */
    tests: () => answered.filter((answer) => answer.kind === 'test'),
    close: server.close,
  };
}
