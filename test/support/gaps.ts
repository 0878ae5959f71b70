import { expect, vi } from 'vitest';
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
  return vi.waitFor(
    async () => {
      const answer = await fetch(`${runtime.adminUrl}/gaps?context=${encodeURIComponent(context)}`);
      const [gap] = (await answer.json()) as Array<{ openedAt: string }>;
      expect(gap, `a gap of ${context} in GET /gaps`).toBeDefined();
      return gap!.openedAt;
    },
    { timeout: 15_000, interval: 100 },
  );
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
  return vi.waitFor(
    async () => {
      const answer = await fetch(`${runtime.adminUrl}/gaps?context=${encodeURIComponent(context)}`);
      const [gap] = (await answer.json()) as GapAnswer[];
      expect(gap !== undefined && done(gap), `the gap of ${context} as awaited: ${JSON.stringify(gap)}`).toBe(
        true,
      );
      return gap!;
    },
    { timeout: timeoutMs, interval: 250 },
  );
}
