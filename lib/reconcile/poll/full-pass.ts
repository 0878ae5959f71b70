import type { FullPassMemory } from '../../store/watch-memory.js';
import { scheduleSlackMs } from '../../store/watch-memory.js';
import type { ReconcileRequest } from '../request.js';
import { enqueue, pendingOf, withPending } from './pending.js';
import type { PollDeps, PollReport } from './poll.js';

const HOUR_MS = 3_600_000;

/** What one poll does about a context's full pass: the memory to write first, then the requests to send. */
export interface FullPassStep {
  next: FullPassMemory;
  requests: ReconcileRequest[];
}

/**
 * One poll's decision about a context's scheduled full pass, pure: due when none was ever requested
 * or the last was requested `intervalMs` ago or more (less the schedule's slack), then a new
 * `{reason: 'full', full: true}` request; else the request an earlier poll wrote and may not have sent;
 * else nothing.
 */
export function fullPassStep(
  memory: FullPassMemory | undefined,
  context: string,
  now: number,
  intervalMs: number,
): FullPassStep | undefined {
  const due = memory === undefined || now + scheduleSlackMs(intervalMs) >= memory.requestedAt + intervalMs;
  if (due) {
    const request: ReconcileRequest = {
      context,
      reason: 'full',
      full: true,
      requestedAt: new Date(now).toISOString(),
    };
    return { next: withPending<FullPassMemory>({ requestedAt: now }, [request]), requests: [request] };
  }
  const pending = pendingOf(memory);
  return pending.length === 0 ? undefined : { next: memory, requests: pending };
}

/**
 * The scheduled full pass of one context the poll knows (RECONCILE_FULL_HOURS): every
 * row of each entity compared, which also finds changes that raised no event. The decision is written
 * over the version read (conditionally) before it is sent, so two polls at once request it once, and a
 * request written but not sent is sent by the next poll. Off when `fullHours` is 0.
 */
export async function requestFullPass(deps: PollDeps, context: string, report: PollReport): Promise<void> {
  if (deps.config.fullHours === 0) return;
  const now = (deps.now ?? Date.now)();
  const { item: memory, version } = await deps.store.loadFullPass(context);
  const step = fullPassStep(memory, context, now, deps.config.fullHours * HOUR_MS);
  if (step === undefined) return;
  if (!(await deps.store.saveFullPass(context, step.next, version))) {
    deps.logger.info('another poll is requesting the full pass of this context', { context });
    return;
  }
  for (const request of step.requests) await enqueue(deps, request, report);
  report.fullPasses += step.requests.length;
  // Sent: only the time stays (over the version written above; if another poll wrote meanwhile, its stands).
  await deps.store.saveFullPass(context, { requestedAt: step.next.requestedAt }, version + 1);
}
