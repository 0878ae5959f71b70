import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSampleBody } from '../../tools/samples.js';
import { createRealisticSender } from '../../tools/sender.js';
import { launchChromium, waitForText, withPage } from '../support/browser.js';
import { type RuntimeProcess, spawnLocalRuntime } from '../support/local-runtime.js';

/**
 * Replay from the Parked view: a person parked while ENTITIES left persons out, replayed with the
 * button once the runtime stores every entity, then shown in the Row view.
 */
const SECRET = 'browser-replay-secret';
const CONTEXT = 'CustReplay';

let runtime: RuntimeProcess | undefined;
let browser: Browser;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'dashboard-replay-'));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await runtime?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('replay of the parked deliveries in Chromium', () => {
  it('a person parked by ENTITIES is replayed with the button after a restart, and its row is shown', async () => {
    const parking = await spawnLocalRuntime({
      dataDir,
      env: { WEBHOOK_SECRET: SECRET, ENTITIES: 'contact,activity' },
    });
    runtime = parking;
    const person = buildSampleBody('person.created', { context: CONTEXT, primaryKey: 31 });
    const sender = createRealisticSender({
      url: parking.webhookUrl,
      secret: SECRET,
      retryDelaysMs: [50, 50],
    });
    expect(await sender.deliver(JSON.stringify(person))).toBe('accepted');
    sender.close();

    await withPage(browser, 'replay-parked-before', async (page) => {
      await page.goto(`${parking.adminUrl}/#/parked`);
      const row = page.locator('tr', { hasText: String(person.EventId) });
      await row.waitFor();
      expect(await row.locator('td').first().textContent()).toBe(
        '‖ entity-not-enabledENTITIES does not include person',
      );
      expect(await row.locator('td').nth(1).textContent()).toBe('person.created');
    });

    await parking.stop();
    const replaying = await spawnLocalRuntime({ dataDir, env: { WEBHOOK_SECRET: SECRET } });
    runtime = replaying;

    await withPage(browser, 'replay-parked', async (page) => {
      await page.goto(`${replaying.adminUrl}/#/parked`);
      await page.locator('tr', { hasText: String(person.EventId) }).waitFor();
      const replay = page.getByRole('button', { name: 'Replay parked deliveries' });

      // From the keyboard; Escape cancels and nothing is replayed.
      await replay.focus();
      await page.keyboard.press('Enter');
      await waitForText(page.locator('dialog[open]'), 'Every parked delivery decided again');
      await page.keyboard.press('Escape');
      expect(await page.locator('dialog[open]').count()).toBe(0);
      expect(await page.locator('table.parked tbody tr').count()).toBe(1);

      await replay.press('Enter');
      await page.locator('dialog[open]').getByRole('button', { name: 'Replay', exact: true }).press('Enter');
      await waitForText(page.locator('.replay-result'), 'Replay: 1 replayed, 0 kept.');
      await waitForText(page.locator('main'), 'Nothing is parked.');
      expect(await page.locator('main h2').textContent()).toBe('Parked deliveries (0)');
    });

    // The entities worker writes the row in the background: wait for it before the page asks (a 404
    // would count as a failed request).
    await expect
      .poll(async () => (await fetch(`${replaying.adminUrl}/rows/${CONTEXT}/person/31`)).status, {
        timeout: 15_000,
      })
      .toBe(200);
    await withPage(browser, 'replay-row', async (page) => {
      await page.goto(`${replaying.adminUrl}/#/row`);
      await page.getByLabel('Context').fill(CONTEXT);
      await page.getByLabel('Entity').fill('person');
      await page.getByLabel('PrimaryKey').fill('31');
      await page.getByLabel('PrimaryKey').press('Enter');
      await waitForText(page.locator('#row-title'), `person 31 in ${CONTEXT}`);
      expect(await page.locator('.status').textContent()).toBe('active');
      expect(await page.locator('ol.history > li').getAttribute('data-event-id')).toBe(person.EventId);
      // The registry's entities are offered as the user types.
      expect(
        await page
          .locator('datalist#entities option')
          .evaluateAll((options) => options.map((option) => option.getAttribute('value'))),
      ).toEqual(expect.arrayContaining(['contact', 'activity', 'person', 'sale', 'list.', 'y_']));
    });
  }, 120_000);
});
