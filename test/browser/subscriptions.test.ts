import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { SubscriptionStatus } from '../../dashboard/source.js';
import { getJson } from '../../tools/http-client.js';
import { buildSampleBody } from '../../tools/samples.js';
import { createRealisticSender, type RealisticSender } from '../../tools/sender.js';
import { launchChromium, waitForText, withPage } from '../support/browser.js';
import { type RuntimeProcess, spawnLocalRuntime } from '../support/local-runtime.js';

const SECRET = 'browser-test-secret';

let runtime: RuntimeProcess;
let browser: Browser;
let sender: RealisticSender;
let target: Server;
let dataDir: string;
/** The detail-types the consumer answered 204 (`/ok`); `/down` always answers 500. */
const received: string[] = [];

beforeAll(async () => {
  target = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk));
    req.on('end', () => {
      if (req.url === '/ok') received.push(JSON.parse(body)['detail-type']);
      res.statusCode = req.url === '/ok' ? 204 : 500;
      res.end();
    });
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  dataDir = mkdtempSync(join(tmpdir(), 'dashboard-subscriptions-'));
  const file = join(dataDir, 'subscriptions.yml');
  writeFileSync(
    file,
    `- name: department-changes
  pattern: { detail-type: [contact.changed], detail: { significantChanges: [department] } }
  target: { url: "${url}/ok" }
- name: new-contacts
  pattern: { detail-type: [contact.created] }
  target: { url: "${url}/down" }
  retry: { attempts: 1, maxAgeSeconds: 60 }
`,
  );
  [runtime, browser] = await Promise.all([
    spawnLocalRuntime({ dataDir, env: { WEBHOOK_SECRET: SECRET, SUBSCRIPTIONS_FILE: file } }),
    launchChromium(),
  ]);
  sender = createRealisticSender({ url: runtime.webhookUrl, secret: SECRET, retryDelaysMs: [50, 50] });
});

afterAll(async () => {
  sender?.close();
  await browser?.close();
  await runtime?.stop();
  await new Promise((resolve) => target?.close(resolve));
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the Subscriptions view in Chromium', () => {
  it('a delivered change, a dead-lettered one with its failed attempts, counts and patterns in words', async () => {
    const created = buildSampleBody('contact.created', { context: 'CustSub', primaryKey: 7 });
    expect(await sender.deliver(JSON.stringify(created))).toBe('accepted');
    const changed = buildSampleBody('contact.changed', { context: 'CustSub', primaryKey: 7 });
    expect(await sender.deliver(JSON.stringify(changed))).toBe('accepted');
    // The workers publish, then the bus delivers and retries.
    await vi.waitFor(
      async () => {
        const [department, created] = await getJson<SubscriptionStatus[]>(
          `${runtime.adminUrl}/subscriptions`,
        );
        expect(department?.delivered).toBe(1);
        expect(created).toMatchObject({ dlqDepth: 1, inFlight: 0 });
      },
      { timeout: 20_000, interval: 100 },
    );
    expect(received).toEqual(['contact.changed']);

    await withPage(browser, 'subscriptions', async (page) => {
      await page.goto(runtime.adminUrl);
      // Keyboard only: the nav link, then the DLQ entry's event.
      await page.getByRole('link', { name: 'Subscriptions' }).press('Enter');
      await waitForText(page.locator('main h2'), 'Subscriptions (2)');
      expect(await page.locator('main .note').textContent()).toContain(
        'Counted by the local bus since this start',
      );

      const department = page.locator('article[data-subscription="department-changes"]');
      const count = (card: typeof department, name: string) =>
        card.locator(`dd[data-count="${name}"]`).textContent();
      expect(await department.locator('ul.pattern').textContent()).toContain(
        'detail.significantChanges: "department"',
      );
      expect(await department.locator('dd.mono').textContent()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ok$/);
      expect(await count(department, 'matched')).toBe('1');
      expect(await count(department, 'delivered')).toBe('1');
      expect(await count(department, 'inFlight')).toBe('0');
      expect(await count(department, 'failed')).toBe('0');
      expect(await count(department, 'dlq')).toBe('✔ empty');
      const delivery = department.locator('tr[data-delivery]');
      expect(await delivery.count()).toBe(1);
      expect(await delivery.textContent()).toContain(String(changed.EventId));
      expect(await delivery.textContent()).toContain('contact.changed');
      expect(await delivery.textContent()).toContain('✔ delivered');

      const newContacts = page.locator('article[data-subscription="new-contacts"]');
      expect(await newContacts.locator('ul.pattern').textContent()).toBe('detail-type: "contact.created"');
      expect(await count(newContacts, 'matched')).toBe('1');
      expect(await count(newContacts, 'delivered')).toBe('0');
      expect(await count(newContacts, 'failed')).toBe('✖ 1');
      expect(await count(newContacts, 'dlq')).toBe('⚠ 1 waiting');
      expect(await newContacts.locator('p').textContent()).toBe('No delivery yet.');
      expect(
        await newContacts
          .locator('tr[data-failure]')
          .evaluateAll((rows) => rows.map((row) => row.textContent)),
      ).toEqual([expect.stringMatching(/2✖ HTTP 500$/), expect.stringMatching(/1✖ HTTP 500$/)]);
      const letter = newContacts.locator('tr[data-dead-letter]');
      expect(await letter.count()).toBe(1);
      expect(await letter.textContent()).toContain(String(created.EventId));
      expect(await letter.textContent()).toContain('⚠ dead-lettered: HTTP 500');
      await letter.locator('summary').press('Enter');
      const event = letter.locator('pre.body');
      await event.waitFor();
      expect(JSON.parse((await event.textContent()) ?? '')).toMatchObject({
        'detail-type': 'contact.created',
        source: 'crm-webhook-receiver',
        detail: { EventId: created.EventId, PrimaryKey: 7, ContextIdentifier: 'CustSub' },
      });
    });
  });
});
