import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, waitForText, withPage } from '../support/browser.js';
import { openGap } from '../support/gaps.js';
import { type RuntimeProcess, spawnLocalRuntime } from '../support/local-runtime.js';
import { type SilentCrm, startSilentCrm } from '../support/silent-crm.js';

/**
 * The gap of a webhook on the dashboard: with CRM_API_URL a Reconcile button that queues the gap's
 * window (a POST carrying the page's token); without, the line that says the gap cannot be recovered.
 * The CRM here accepts connections and never answers, so the queued request stays visible on the queue.
 */
const SECRET = 'browser-reconcile-secret';
const dirs: string[] = [];
let silentCrm: SilentCrm;
let on: RuntimeProcess;
let off: RuntimeProcess;
let browser: Browser;

beforeAll(async () => {
  silentCrm = await startSilentCrm();
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
        CRM_API_URL: silentCrm.apiUrl,
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
  await silentCrm?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('a gap on the dashboard', () => {
  it('with CRM_API_URL: Reconcile queues the gap’s window, with the page’s token', async () => {
    const openedAt = await openGap(on, 'CustGap', SECRET);
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
    // The state worker queued the gap's own reconcile when it opened (reason gap-opened); the button, one manual.
    const manual = messages
      .map((message) => JSON.parse(message.body) as { reason: string })
      .filter((request) => request.reason === 'manual');
    expect(manual).toEqual([
      // Naming the gap's webhook: the run is recorded on its card.
      expect.objectContaining({ context: 'CustGap', reason: 'manual', from: openedAt, webhookId: 9 }),
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
    const messages = (await (await fetch(`${on.adminUrl}/queues/reconcile/messages`)).json()) as Array<{
      body: string;
    }>;
    // Still only the button's manual request of the test above (and the gap's own gap-opened).
    expect(messages.filter((message) => JSON.parse(message.body).reason === 'manual')).toHaveLength(1);
  });

  it('without CRM_API_URL: the gap says it cannot be recovered, and offers no button', async () => {
    await openGap(off, 'CustOff', SECRET);
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
