import { describe, expect, it } from 'vitest';
import { crmDashboardForFile, waitForText, withPage } from '../support/browser.js';

/** The Tenants view of `npm start`'s dashboard against the CRM simulator: onboard, rotate, offboard by its buttons. */
const CONTEXT = 'CustView';
const world = crmDashboardForFile('tenants');

describe('the Tenants view', () => {
  it('onboards a context, rotates its secret and offboards it by its buttons', async () => {
    await withPage(world.browser, 'tenants', async (page) => {
      await page.goto(`${world.runtime.adminUrl}/#/tenants`);
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
      expect(world.crm.core.webhook(CONTEXT, 1).events).toEqual(['contact.created', 'contact.changed']);

      await row.getByRole('button', { name: 'Rotate secret' }).click();
      await page.locator('dialog[open]').getByRole('button', { name: 'Rotate' }).click();
      await waitForText(page.locator('#status'), `${CONTEXT}: done.`, 30_000);
      await waitForText(row, 'a replaced one accepted until');

      await row.getByRole('button', { name: 'Offboard' }).click();
      await page.locator('dialog[open]').getByRole('button', { name: 'Offboard' }).click();
      await waitForText(row, 'offboarded', 30_000);
      expect(world.crm.core.store.context(CONTEXT).webhooks).toEqual([]);
    });
  }, 120_000);
});
