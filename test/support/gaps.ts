import { buildSampleBody, buildSampleDelivery } from '../../tools/samples.js';
import type { RuntimeProcess } from './local-runtime.js';

/**
 * The webhook 9 (or `webhookId`) of `context` started, then stopped, delivered signed with `secret` to
 * a running `npm start`: an open gap. Resolves with its openedAt once `GET /gaps` shows it.
 */
export async function openGap(
  runtime: RuntimeProcess,
  context: string,
  secret: string,
  webhookId = 9,
): Promise<string> {
  for (const event of ['webhook.started', 'webhook.stopped'] as const) {
    const delivery = buildSampleDelivery(buildSampleBody(event, { primaryKey: webhookId, context }), {
      secret,
    });
    const answer = await fetch(runtime.webhookUrl, {
      method: 'POST',
      headers: delivery.headers,
      body: delivery.body,
    });
    if (answer.status !== 200) throw new Error(`${event} of ${context} answered ${answer.status}`);
  }
  for (const deadline = Date.now() + 15_000; Date.now() < deadline; ) {
    const answer = await fetch(`${runtime.adminUrl}/gaps?context=${encodeURIComponent(context)}`);
    const gaps = (await answer.json()) as Array<{ openedAt: string }>;
    if (gaps[0]) return gaps[0].openedAt;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no gap of ${context} within 15 s`);
}

/** A gap as `GET /gaps` answers it, what the tests read of it (dashboard/reconcile-routes.ts, GapView). */
export interface GapAnswer {
  lastReconcile?: {
    status: string;
    reason: string;
    rowsDeleted?: number;
    deletesHeld?: Record<string, number>;
  };
  reactivatedAt?: string;
}

/** The first gap of `context` from a running `npm start`'s `GET /gaps`, once `done` says so (asked every 250 ms). */
export async function gapUntil(
  runtime: RuntimeProcess,
  context: string,
  done: (gap: GapAnswer) => boolean,
  timeoutMs: number,
): Promise<GapAnswer> {
  let last: GapAnswer | undefined;
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
    const answer = await fetch(`${runtime.adminUrl}/gaps?context=${encodeURIComponent(context)}`);
    [last] = (await answer.json()) as GapAnswer[];
    if (last !== undefined && done(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`GET /gaps did not get there within ${timeoutMs} ms: ${JSON.stringify(last)}`);
}
