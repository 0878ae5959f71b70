import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCrm, startCrm } from '../../tools/crm/start.js';
import { launchChromium, waitForText, withPage } from '../support/browser.js';
import { type RuntimeProcess, spawnLocalRuntime } from '../support/local-runtime.js';

/** The Tenants view of `npm start`'s dashboard against the CRM simulator: onboard, rotate, offboard by its buttons. */
const CONTEXT = 'CustView';
let root: string;
let crm: RunningCrm;
let runtime: RuntimeProcess;
let browser: Browser;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'dashboard-tenants-'));
  crm = await startCrm({ dataDir: join(root, 'crm'), delivery: { retryDelaysMs: [1, 1] } });
  [runtime, browser] = await Promise.all([
    spawnLocalRuntime({
      dataDir: join(root, 'data'),
      env: {
        CRM_API_URL: `${crm.url}/{ContextIdentifier}/api/v1`,
        CRM_CREDENTIALS: JSON.stringify({ '*': { type: 'basic', user: 'crm', password: 'crm' } }),
      },
      readyTimeoutMs: 60_000,
    }),
    launchChromium(),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await runtime?.stop();
  await crm?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('the Tenants view', () => {
  it('onboards a context, rotates its secret and offboards it by its buttons', async () => {
    await withPage(browser, 'tenants', async (page) => {
      await page.goto(`${runtime.adminUrl}/#/tenants`);
      await waitForText(page.locator('#view'), 'No tenant onboarded yet.');
      await page.getByLabel('ContextIdentifier').fill(CONTEXT);
      await page.getByLabel('Events').fill('contact.created,contact.changed');
      await page.getByRole('button', { name: 'Onboard' }).click();
      await waitForText(
        page.locator('#status'),
        `${CONTEXT} onboarded: a new secret accepted, data webhook 1 created`,
        30_000,
      );
      const row = page.locator(`tr[data-context="${CONTEXT}"]`);
      await waitForText(row, 'active');
      expect(await row.locator('td').nth(4).textContent()).toBe('2');
      expect(crm.core.webhook(CONTEXT, 1).events).toEqual(['contact.created', 'contact.changed']);

      await row.getByRole('button', { name: 'Rotate secret' }).click();
      await page.locator('dialog[open]').getByRole('button', { name: 'Rotate' }).click();
      await waitForText(page.locator('#status'), `${CONTEXT}: done.`, 30_000);
      await waitForText(row, 'a replaced one accepted until');

      await row.getByRole('button', { name: 'Offboard' }).click();
      await page.locator('dialog[open]').getByRole('button', { name: 'Offboard' }).click();
      await waitForText(row, 'offboarded', 30_000);
      expect(crm.core.store.context(CONTEXT).webhooks).toEqual([]);
    });
  }, 120_000);
});
