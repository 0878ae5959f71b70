import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSampleBody, buildSampleDelivery } from '../../tools/samples.js';
import { launchChromium, waitForText, withPage } from '../support/browser.js';
import { type RuntimeProcess, spawnLocalRuntime } from '../support/local-runtime.js';

/**
 * The gap of a webhook on the dashboard: with CRM_API_URL a Reconcile button that queues the gap's
 * window (a POST carrying the page's token); without, the line that says the gap cannot be recovered.
 * The CRM here accepts connections and never answers, so the queued request stays visible on the queue.
 */
const SECRET = 'browser-reconcile-secret';
const dirs: string[] = [];
const sockets = new Set<Socket>();
let silentCrm: Server;
let on: RuntimeProcess;
let off: RuntimeProcess;
let browser: Browser;

beforeAll(async () => {
  silentCrm = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => silentCrm.listen(0, '127.0.0.1', resolve));
  const port = (silentCrm.address() as { port: number }).port;
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'dashboard-reconcile-'));
    dirs.push(dir);
    return dir;
  };
  [on, off, browser] = await Promise.all([
    spawnLocalRuntime({
      dataDir: dataDir(),
      env: {
        WEBHOOK_SECRET: SECRET,
        CRM_API_URL: `http://127.0.0.1:${port}/{ContextIdentifier}/api/v1`,
        CRM_CREDENTIALS: JSON.stringify({ '*': { type: 'basic', user: 'u', password: 'p' } }),
        CRM_TIMEOUT_MS: '600000',
      },
      readyTimeoutMs: 60_000,
    }),
    spawnLocalRuntime({ dataDir: dataDir(), env: { WEBHOOK_SECRET: SECRET }, readyTimeoutMs: 60_000 }),
    launchChromium(),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await Promise.all([on?.stop(), off?.stop()]);
  for (const socket of sockets) socket.destroy();
  silentCrm?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The webhook 9 of `context` started, then stopped: an open gap; resolves with its openedAt. */
async function openGap(runtime: RuntimeProcess, context: string): Promise<string> {
  for (const event of ['webhook.started', 'webhook.stopped'] as const) {
    const delivery = buildSampleDelivery(buildSampleBody(event, { primaryKey: 9, context }), {
      secret: SECRET,
    });
    const answer = await fetch(runtime.webhookUrl, {
      method: 'POST',
      headers: delivery.headers,
      body: delivery.body,
    });
    expect(answer.status).toBe(200);
  }
  for (const deadline = Date.now() + 15_000; Date.now() < deadline; ) {
    const gaps = (await (await fetch(`${runtime.adminUrl}/gaps?context=${context}`)).json()) as Array<{
      openedAt: string;
    }>;
    if (gaps[0]) return gaps[0].openedAt;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no gap of ${context}`);
}

describe('a gap on the dashboard', () => {
  it('with CRM_API_URL: Reconcile queues the gap’s window, with the page’s token', async () => {
    const openedAt = await openGap(on, 'CustGap');
    await withPage(browser, 'gap-reconcile', async (page) => {
      await page.goto(`${on.adminUrl}/`);
      const card = page.locator('article[data-webhook="CustGap/9"]');
      const button = card.getByRole('button', { name: 'Reconcile' });
      await button.waitFor();
      expect(await button.getAttribute('title')).toMatch(
        /^gaps are reconciled from the CRM API http:\/\/127\.0\.0\.1:/,
      );
      await button.click();
      await page.locator('dialog[open]').getByRole('button', { name: 'Reconcile' }).click();
      await waitForText(page.locator('#status'), `Reconcile of CustGap from ${openedAt} until now queued.`);
    });
    const messages = (await (await fetch(`${on.adminUrl}/queues/reconcile/messages`)).json()) as Array<{
      body: string;
    }>;
    expect(messages.map((message) => JSON.parse(message.body))).toEqual([
      expect.objectContaining({ context: 'CustGap', reason: 'manual', from: openedAt }),
    ]);
  });

  it('the same POST from another page of the browser, without the token, is refused and queues nothing', async () => {
    await withPage(
      browser,
      'gap-reconcile-no-token',
      async (page) => {
        await page.goto(`${on.adminUrl}/`);
        const status = await page.evaluate(
          async () =>
            (await fetch('/reconcile?context=CustGap&from=2026-11-27T10:00:00Z', { method: 'POST' })).status,
        );
        expect(status).toBe(403);
      },
      (url, status) => url.includes('/reconcile') && status === 403,
    );
    const messages = (await (await fetch(`${on.adminUrl}/queues/reconcile/messages`)).json()) as unknown[];
    expect(messages).toHaveLength(1);
  });

  it('without CRM_API_URL: the gap says it cannot be recovered, and offers no button', async () => {
    await openGap(off, 'CustOff');
    await withPage(browser, 'gap-reconcile-off', async (page) => {
      await page.goto(`${off.adminUrl}/`);
      const card = page.locator('article[data-webhook="CustOff/9"]');
      await waitForText(
        card.locator('.recovery.off'),
        '✖ reconciliation is off: CRM_API_URL is not set, so gaps cannot be recovered (set CRM_API_URL and CRM_CREDENTIALS, then restart)',
      );
      expect(await card.getByRole('button', { name: 'Reconcile' }).count()).toBe(0);
    });
  });
});
