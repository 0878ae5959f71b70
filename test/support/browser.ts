import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { type RunningCrm, startCrm } from '../../tools/crm/start.js';
import { type RuntimeProcess, spawnLocalRuntime } from './local-runtime.js';

/** Debian's Chromium (`apt-get install -y chromium`); Playwright never downloads a browser here. */
export const CHROMIUM = '/usr/bin/chromium';
export const SCREENSHOTS = fileURLToPath(new URL('../browser/screenshots/', import.meta.url));

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** `npm start` reconciling against the CRM simulator (one Basic login for every context), and Chromium. */
export interface CrmDashboard {
  crm: RunningCrm;
  runtime: RuntimeProcess;
  browser: Browser;
}

/**
 * A {@link CrmDashboard} for a file's browser tests, `env` added to npm start's: started before them,
 * stopped after; its fields are there once the tests run.
 */
export function crmDashboardForFile(name: string, env: Record<string, string> = {}): CrmDashboard {
  const world = {} as CrmDashboard;
  const root = join(tmpdir(), `dashboard-${name}-`);
  let dir: string | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(root);
    world.crm = await startCrm({ dataDir: join(dir, 'crm'), delivery: { retryDelaysMs: [1, 1] } });
    [world.runtime, world.browser] = await Promise.all([
      spawnLocalRuntime({
        dataDir: join(dir, 'data'),
        env: {
          CRM_API_URL: world.crm.apiUrl('{ContextIdentifier}'),
          CRM_CREDENTIALS: JSON.stringify({ '*': { type: 'basic', user: 'crm', password: 'crm' } }),
          ...env,
        },
        readyTimeoutMs: 60_000,
      }),
      launchChromium(),
    ]);
  });
  afterAll(async () => {
    await world.browser?.close();
    await world.runtime?.stop();
    await world.crm?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  return world;
}

/**
 * Runs `body` on a fresh page of `browser`, then saves a full-page screenshot as
 * `test/browser/screenshots/<name>.png` and fails if the page logged a console error, threw, or had
 * a request fail or answered with 4xx/5xx, even when `body` passed.
 */
export async function withPage(
  browser: Browser,
  name: string,
  body: (page: Page) => Promise<void>,
  /** An answer of 4xx/5xx the test asks for (a lookup of what does not exist), not counted as a problem. */
  expected: (url: string, status: number) => boolean = () => false,
): Promise<void> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    // The browser's own line for an answer `expected` allows is no problem either.
    const status = /^Failed to load resource: .* status of (\d+)/.exec(message.text())?.[1];
    if (status !== undefined && expected(message.location().url, Number(status))) return;
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) =>
    problems.push(`request failed: ${request.method()} ${request.url()} (${request.failure()?.errorText})`),
  );
  page.on('response', (response) => {
    if (response.status() >= 400 && !expected(response.url(), response.status()))
      problems.push(`HTTP ${response.status()}: ${response.request().method()} ${response.url()}`);
  });
  let seen: string[] = [];
  try {
    await body(page);
  } finally {
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: true }).catch(() => undefined);
    // What happened while the page was in use; closing it aborts its pending polls, which is no fault.
    seen = problems.slice();
    await context.close();
  }
  if (seen.length > 0) throw new Error(`the page had problems:\n${seen.join('\n')}`);
}

/** Waits until `locator` holds an element whose text contains `text` (or matches it). */
export async function waitForText(locator: Locator, text: string | RegExp, timeout = 15_000): Promise<void> {
  await locator.filter({ hasText: text }).first().waitFor({ timeout });
}
