import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCrm, startCrm } from '../../tools/crm/start.js';
import { launchChromium, waitForText, withPage } from '../support/browser.js';
import { type GapAnswer, gapUntil, openGap } from '../support/gaps.js';
import { type RuntimeProcess, spawnLocalRuntime } from '../support/local-runtime.js';
import { startSkewedCrm } from '../support/skewed-crm.js';

/**
 * What became of a gap, on its card: `npm start` against the CRM simulator. The webhook's gap opens
 * (its state events), its gap-opened reconcile runs against the CRM; the CRM disables the webhook, the
 * poll sets it Active again and reconciles its window; a person asks for one more with the card's
 * button. The card shows the last reconcile (its trigger, completed with its counts) and when the
 * webhook was set Active again, read from the webhooks table. The CRM's API answers through a server
 * whose Date header is 10 minutes ahead: the card says the skew.
 */
const SECRET = 'browser-recovery-secret';
const CONTEXT = 'CustCard';
const POLL_SECONDS = 10;
let root: string;
let crm: RunningCrm;
let proxy: Awaited<ReturnType<typeof startSkewedCrm>>;
let runtime: RuntimeProcess;
let browser: Browser;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'dashboard-recovery-'));
  crm = await startCrm({ dataDir: join(root, 'crm'), delivery: { retryDelaysMs: [1, 1] } });
  proxy = await startSkewedCrm(crm.url, { skewMs: 600_000 });
  [runtime, browser] = await Promise.all([
    spawnLocalRuntime({
      dataDir: join(root, 'data'),
      env: {
        WEBHOOK_SECRET: SECRET,
        CRM_API_URL: proxy.apiUrl,
        CRM_CREDENTIALS: JSON.stringify({ '*': { type: 'basic', user: 'crm', password: 'crm' } }),
        RECONCILE_POLL_SECONDS: String(POLL_SECONDS),
      },
      readyTimeoutMs: 60_000,
    }),
    launchChromium(),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await runtime?.stop();
  await proxy?.close();
  await crm?.stop();
  rmSync(root, { recursive: true, force: true });
});

/** `GET /gaps` of the context until `done` says so (the poll runs every POLL_SECONDS). */
const gapsUntil = (done: (gap: GapAnswer) => boolean, timeoutMs: number) =>
  gapUntil(runtime, CONTEXT, done, timeoutMs);

describe('a gap’s recovery on its card', () => {
  it('the gap-opened reconcile completed with its counts; then the poll’s, and when it set the webhook Active again; then the card’s own', async () => {
    for (let i = 0; i < 2; i++) crm.core.change(CONTEXT, { op: 'create', table: 'contact', fields: {} });
    const webhook = await crm.core.register(CONTEXT, {
      name: 'crm-webhook-receiver',
      // quote too: a run covers what the webhook names, and quote's events carry nothing to compare.
      events: ['contact.created', 'quote.approved'],
      targetUrl: runtime.webhookUrl,
      secret: SECRET,
    });
    await openGap(runtime, CONTEXT, SECRET, webhook.id);
    await gapsUntil((gap) => gap.lastReconcile?.status === 'completed', 30_000);

    await withPage(browser, 'gap-recovery', async (page) => {
      await page.goto(`${runtime.adminUrl}/`);
      const card = page.locator(`article[data-webhook="${CONTEXT}/${webhook.id}"]`);
      const last = card.locator('.last-reconcile');
      await waitForText(last, 'Last reconcile (queued when the gap opened, requested ');
      expect(await last.getAttribute('data-status')).toBe('completed');
      // The CRM's two contacts, listed; new to the receiver, so each one changed a row.
      expect(await last.textContent()).toMatch(
        /✔ completed .+: 2 rows listed, 2 changed, 0 deleted, \d+ API calls\. Not reconciled: /,
      );
      // The webhook names quote, whose events carry nothing to compare, and the card says so.
      expect(await last.locator('.not-reconciled').textContent()).toContain(
        'quote (its events carry no FieldValues: nothing to compare)',
      );
      expect(await last.locator('.clock-skew').textContent()).toMatch(
        /The CRM's API clock is (599|600|601) s ahead of its events' Timestamps/,
      );
      expect(await card.locator('.reactivated').count()).toBe(0);

      // The CRM disables the webhook: the poll sets it Active again and reconciles its window.
      await crm.core.setState(CONTEXT, webhook.id, 'TooManyErrors');
      const recovered = await gapsUntil(
        (gap) =>
          gap.reactivatedAt !== undefined &&
          gap.lastReconcile?.reason === 'poll' &&
          gap.lastReconcile.status === 'completed',
        4 * POLL_SECONDS * 1000,
      );
      await page.reload();
      await waitForText(card.locator('.reactivated'), '↻ Webhook set Active again by the poll ');
      expect(await card.locator('.reactivated time').getAttribute('datetime')).toBe(recovered.reactivatedAt);
      await waitForText(last, 'Last reconcile (queued by the poll of the CRM, requested ');
      expect(await last.getAttribute('data-status')).toBe('completed');
      expect(crm.core.webhook(CONTEXT, webhook.id).state).toBe('Active');

      // The card's own Reconcile button: a person's run, named after the webhook, shown when done.
      await card.getByRole('button', { name: 'Reconcile' }).click();
      await page.locator('dialog[open]').getByRole('button', { name: 'Reconcile' }).click();
      await waitForText(page.locator('#status'), `Reconcile of ${CONTEXT} from `);
      await gapsUntil(
        (gap) => gap.lastReconcile?.reason === 'manual' && gap.lastReconcile.status === 'completed',
        30_000,
      );
      await page.reload();
      await waitForText(last, 'Last reconcile (asked for by a person, requested ');
      expect(await last.getAttribute('data-status')).toBe('completed');
    });
  }, 120_000);
});
