import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSampleBody } from '../../tools/samples.js';
import { launchChromium } from '../support/browser.js';
import { type RuntimeProcess, spawnLocalRuntime } from '../support/local-runtime.js';

/**
 * Another site's page in Chromium (served from another loopback port, so another origin) tries what
 * a security review found a page could do to `npm start`: read the rows table through dynalite, and send a
 * forged delivery to a queue through local-aws-sqs.
 */
let runtime: RuntimeProcess;
let browser: Browser;
let attacker: Server;
let attackerUrl: string;
let dataDir: string;
let info: {
  urls: { sqs: string; dynamodb: string };
  queues: Array<{ key: string; url: string }>;
  tables: Record<string, string>;
};

beforeAll(async () => {
  attacker = createServer((_, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>another site</title>');
  });
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
  attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`;
  dataDir = mkdtempSync(join(tmpdir(), 'browser-web-page-'));
  [runtime, browser] = await Promise.all([
    spawnLocalRuntime({ dataDir, env: { WEBHOOK_SECRET: 'browser-web-page' } }),
    launchChromium(),
  ]);
  info = (await (await fetch(`${runtime.adminUrl}/info`)).json()) as typeof info;
});

afterAll(async () => {
  await browser?.close();
  await runtime?.stop();
  await new Promise((resolve) => attacker?.close(resolve));
  rmSync(dataDir, { recursive: true, force: true });
});

async function onAttackerPage<T>(body: (page: Page) => Promise<T>): Promise<T> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(attackerUrl);
    return await body(page);
  } finally {
    await context.close();
  }
}

describe('another site’s page in Chromium', () => {
  it('cannot read the rows table through dynalite: its preflight is refused, so the fetch fails', async () => {
    const outcome = await onAttackerPage((page) =>
      page.evaluate(
        async ({ endpoint, table }) => {
          try {
            const answer = await fetch(endpoint, {
              method: 'POST',
              headers: {
                'content-type': 'application/x-amz-json-1.0',
                'x-amz-target': 'DynamoDB_20120810.Scan',
                'x-amz-date': '20250101T000000Z',
                authorization:
                  'AWS4-HMAC-SHA256 Credential=local/20250101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=00',
              },
              body: JSON.stringify({ TableName: table }),
            });
            return `read ${answer.status}: ${(await answer.text()).slice(0, 40)}`;
          } catch (error) {
            return `failed: ${(error as Error).name}`;
          }
        },
        { endpoint: info.urls.dynamodb, table: info.tables.rows },
      ),
    );

    expect(outcome).toBe('failed: TypeError');
  });

  it('cannot send a forged delivery to a queue with a no-cors form POST', async () => {
    const forged = buildSampleBody('person.created', { context: 'CustPage', primaryKey: 66 });
    const form = new URLSearchParams({
      Action: 'SendMessage',
      QueueUrl: info.queues.find((queue) => queue.key === 'contact')!.url,
      MessageBody: JSON.stringify(forged),
      MessageGroupId: 'CustPage:person:66',
      MessageDeduplicationId: String(forged.EventId),
    }).toString();

    const status = await onAttackerPage(async (page) => {
      const answered = page.waitForResponse((response) => response.url().startsWith(info.urls.sqs));
      await page.evaluate(
        ({ endpoint, body }) =>
          fetch(endpoint, {
            method: 'POST',
            mode: 'no-cors',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body,
          }).then(() => undefined),
        { endpoint: info.urls.sqs, body: form },
      );
      return (await answered).status();
    });

    expect(status).toBe(403);
    const found = await fetch(`${runtime.adminUrl}/events/${forged.EventId}`);
    expect(((await found.json()) as { places: unknown[] }).places).toEqual([]);
  });
});
