/**
 * The local runtime's worker and parked queues as its admin API shows them: counted before and after a
 * simulation, and waited on to drain.
 */
import type { Agent } from 'node:http';
import type { QueueView } from '../dashboard/views.js';
import { getJson } from './http-client.js';

/** The queues whose messages the workers take: a run has drained when none holds any. */
const WORKER_QUEUES = new Set(['contact', 'activity', 'entities', 'webhookState']);

/** Messages on the parked queue (visible or being looked at). */
export async function parkedCount(adminUrl: string): Promise<number> {
  const queues = await getJson<QueueView[]>(`${adminUrl}/queues`);
  const parked = queues.find((queue) => queue.key === 'parked');
  return parked === undefined ? 0 : parked.visible + parked.inFlight + parked.delayed;
}

/** Messages in the worker queues' DLQs right now. */
export async function deadLettered(adminUrl: string): Promise<number> {
  const queues = await getJson<QueueView[]>(`${adminUrl}/queues`);
  return queues.filter((queue) => WORKER_QUEUES.has(queue.key)).reduce((sum, queue) => sum + queue.dlq, 0);
}

/** Waits until no worker queue has a message visible or in flight, twice in a row. */
export async function waitForDrain(
  adminUrl: string,
  agent: Agent,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let quiet = 0;
  while (Date.now() < deadline && !signal?.aborted) {
    const queues = await getJson<QueueView[]>(`${adminUrl}/queues`, { agent });
    const busy = queues
      .filter((queue) => WORKER_QUEUES.has(queue.key))
      .some((queue) => queue.visible + queue.inFlight + queue.delayed > 0);
    quiet = busy ? 0 : quiet + 1;
    if (quiet >= 2) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}
