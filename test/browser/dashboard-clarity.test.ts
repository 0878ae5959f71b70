import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DashboardSource } from '../../dashboard/source.js';
import type { ParkedView } from '../../dashboard/views.js';
import { validEvent, type WebhookStateEvent } from '../../lib/events/index.js';
import type { Webhook } from '../../lib/model/types.js';
import { applyStateEvent } from '../../lib/webhook-state.js';
import { type ServedDashboard, serveDashboard } from '../../scripts/ops/dashboard.js';
import { buildSampleBody, dotNetTimestamp } from '../../tools/samples.js';
import { launchChromium, withPage } from '../support/browser.js';

/**
 * What the overview and the parked list say, read as a person reads them, from a source of fixed
 * webhooks, recoveries and parked deliveries: a webhook's card is titled by its id (its state events may
 * come through another webhook, whose name they carry), a re-activation sits under the gap it closed and
 * never under one that opened after it, every time has one format with the date where it is not today,
 * and a parked body keeps its lines, scrolled within its column, while the other cells stay on one line.
 */
const CONTEXT = 'CustClear';
const minutesAgo = (n: number) => new Date(Date.now() - n * 60_000);
const yesterday = new Date(Date.now() - 26 * 3600_000);

function state(webhookId: number, verb: 'started' | 'stopped', at: Date): WebhookStateEvent {
  const body = buildSampleBody(`webhook.${verb}`, {
    context: CONTEXT,
    primaryKey: webhookId,
    timestamp: dotNetTimestamp(at),
    webhookName: 'crm-webhook-receiver-state',
  });
  return validEvent(body) as WebhookStateEvent;
}

function webhook(events: WebhookStateEvent[]): Webhook {
  return events.reduce<Webhook | undefined>((stored, event) => applyStateEvent(stored, event), undefined)!;
}

// Webhook 1: Active since yesterday; a gap opened 30 minutes ago and closed 20 minutes ago. The poll set
// it Active again 40 minutes ago, before that gap opened: it belongs under no gap of it.
// Webhook 2: a gap opened 10 minutes ago, closed 5 minutes ago; set Active again by the poll 6 minutes ago.
const webhooks = [
  webhook([
    state(1, 'started', yesterday),
    state(1, 'stopped', minutesAgo(30)),
    state(1, 'started', minutesAgo(20)),
  ]),
  webhook([
    state(2, 'started', yesterday),
    state(2, 'stopped', minutesAgo(10)),
    state(2, 'started', minutesAgo(5)),
  ]),
];
const recoveries = [
  { context: CONTEXT, webhookId: 1, reactivatedAt: minutesAgo(40).toISOString() },
  { context: CONTEXT, webhookId: 2, reactivatedAt: minutesAgo(6).toISOString() },
];
const longBody = JSON.stringify({
  Event: 'invoice.created',
  EventId: '3f2b1c4d-0000-4000-8000-00000000abcd',
  ContextIdentifier: CONTEXT,
  FieldValues: { description: 'a long line '.repeat(40) },
});
const parked: ParkedView = {
  messageId: 'm-1',
  groupId: 'parked',
  deduplicationId: 'd-1',
  receiveCount: 0,
  sentAt: yesterday.toISOString(),
  inFlight: false,
  attributes: { receivedAt: yesterday.toISOString(), reason: 'unknown-event' },
  body: longBody,
  where: 'parked',
  reason: 'unknown-event',
  event: 'invoice.created',
  eventId: '3f2b1c4d-0000-4000-8000-00000000abcd',
};

const source = {
  info: {
    kind: 'local',
    name: 'test source',
    live: false,
    parkedOnRequest: false,
    parkedNote: '',
    replayNote: '',
    subscriptionsNote: '',
  },
  store: {
    listWebhooks: async () => webhooks,
    listRecoveries: async () => recoveries,
  },
  queues: async () => [],
  outcomes: async () => ({ outcomes: ['applied'], perMinute: [] }),
  deliveries: async () => [],
  parked: async () => [parked],
  subscriptions: async () => [],
} as unknown as DashboardSource;

let browser: Browser;
let served: ServedDashboard;

beforeAll(async () => {
  [browser, served] = await Promise.all([launchChromium(), serveDashboard(source, 0)]);
});

afterAll(async () => {
  await browser?.close();
  await served?.close();
});

describe('the dashboard, as a person reads it', () => {
  it('a card is titled by its webhook; a re-activation sits under the gap it closed, or apart; one time format', async () => {
    await withPage(browser, 'clarity-overview', async (page) => {
      await page.goto(served.url);
      const first = page.locator(`article[data-webhook="${CONTEXT}/1"]`);
      const second = page.locator(`article[data-webhook="${CONTEXT}/2"]`);
      await first.waitFor();
      expect(await first.locator('h4').textContent()).toBe(`Webhook 1 · ${CONTEXT}`);
      expect(await first.locator('dl.facts').textContent()).toContain(
        'State events viacrm-webhook-receiver-state',
      );

      // Webhook 2: under its gap, saying it closed it.
      const gap = second.locator('li.gap');
      expect(await gap.locator('.reactivated').textContent()).toMatch(/, which closed this gap$/);
      // Webhook 1: before its gap opened, so not under it, and said apart.
      expect(await first.locator('li.gap .reactivated').count()).toBe(0);
      expect(await first.locator('.reactivated').textContent()).toContain('outside the gaps above');

      // One format: today's times are the clock alone, with seconds; yesterday's carry the date.
      const times = await page
        .locator('time')
        .evaluateAll((elements) =>
          elements.map((element) => ({ iso: element.getAttribute('datetime')!, text: element.textContent! })),
        );
      expect(times.length).toBeGreaterThan(6);
      const today = new Date().toDateString();
      for (const { iso, text } of times) {
        const clock = new Date(iso).toLocaleTimeString('en-US', {
          hour: '2-digit',
          minute: '2-digit',
          second: '2-digit',
        });
        if (new Date(iso).toDateString() === today) expect(text, iso).toBe(clock);
        else expect(text, iso).toMatch(new RegExp(`^[A-Z][a-z]{2} \\d{1,2}, \\d{4} ${clock}$`));
      }
    });
  });

  it('a parked body keeps its lines and scrolls within its column; the other cells stay on one line', async () => {
    await withPage(browser, 'clarity-parked', async (page) => {
      await page.goto(`${served.url}#/parked`);
      const row = page.locator('table.parked tr', { hasText: 'invoice.created' });
      await row.waitFor();
      await row.locator('summary').click();
      const pre = row.locator('pre.body');
      const shape = await pre.evaluate((element) => {
        // In the page, globalThis is the window (this project's TypeScript has no DOM library).
        const style = (
          globalThis as unknown as { getComputedStyle(e: unknown): Record<string, string> }
        ).getComputedStyle(element);
        const lineHeight = Number.parseFloat(style.lineHeight!);
        const padding = Number.parseFloat(style.paddingTop!) + Number.parseFloat(style.paddingBottom!);
        return {
          lines: element.textContent!.split('\n').length,
          rendered: Math.round((element.scrollHeight - padding) / lineHeight),
          scrolls: element.scrollWidth > element.clientWidth,
        };
      });
      expect(shape.rendered).toBe(shape.lines);
      expect(shape.scrolls).toBe(true);
      // The table fits the page, and the EventId and the time are each one line.
      const html = page.locator('html');
      expect(await html.evaluate((root) => root.scrollWidth <= root.clientWidth)).toBe(true);
      for (const inline of [row.locator('a.mono'), row.locator('time')])
        expect(await inline.evaluate((element) => element.getClientRects().length)).toBe(1);
    });
  });
});
