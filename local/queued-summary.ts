import type { LocalQueue } from './emulators/resources.js';

/**
 * What a stop leaves in the queues, in one line: pending messages are processed on the next start,
 * parked and dead-lettered ones never drain by themselves. `undefined` when nothing is left.
 */
export function describeQueued(
  queues: readonly LocalQueue[],
  count: (queueName: string) => number,
): string | undefined {
  const pending: string[] = [];
  let pendingTotal = 0;
  let parked = 0;
  let deadLettered = 0;
  for (const queue of queues) {
    const here = count(queue.name);
    deadLettered += count(queue.dlq.name);
    if (queue.key === 'parked') parked += here;
    else if (here > 0) {
      pending.push(`${queue.key} ${here}`);
      pendingTotal += here;
    }
  }
  const total = pendingTotal + parked + deadLettered;
  if (total === 0) return undefined;
  const parts = [
    `${pendingTotal} pending${pending.length > 0 ? ` (${pending.join(', ')})` : ''}, processed on the next start`,
  ];
  if (parked > 0) parts.push(`${parked} parked (never drain: GET /parked)`);
  if (deadLettered > 0)
    parts.push(`${deadLettered} dead-lettered (until redriven: POST /queues/{name}/redrive)`);
  return `${total} ${total === 1 ? 'message stays' : 'messages stay'} queued: ${parts.join('; ')}`;
}
