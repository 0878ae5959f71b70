import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SubscriptionView } from '../../infra/local/bus.js';
import { SOURCE } from '../../lib/bus/entry.js';
import { createEventBridgePublisher } from '../../lib/bus/publisher.js';
import { failedStart, type RuntimeProcess, spawnLocalRuntime } from '../support/local-runtime.js';

/**
 * Subscriptions through `npm start`: a subscriptions file (SUBSCRIPTIONS_FILE) whose URL target is an
 * HTTP server of this test, and events put on the runtime's bus by the AWS SDK's EventBridge client,
 * as the workers put them. Published events arrive in `received`.
 */
const BUS = 'crm-webhook-receiver-local';

interface Received {
  path: string;
  event: { id: string; 'detail-type': string; source: string; detail: Record<string, unknown> };
}

let dataDir: string;
let target: Server;
let received: Received[];
let runtime: RuntimeProcess;
let eventBridge: EventBridgeClient;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'crm-local-subscriptions-'));
  received = [];
  target = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '', event: JSON.parse(body) });
      res.end();
    });
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  const file = join(dataDir, 'subscriptions.yml');
  writeFileSync(
    file,
    `- name: department-changes
  pattern: { detail-type: [contact.changed], detail: { significantChanges: [department] } }
  target: { url: "${url}/department" }
- name: cleanup
  pattern: { detail-type: [contact.deleted] }
  target: { lambda: "arn:aws:lambda:eu-west-1:123456789012:function:cleanup" }
`,
  );
  runtime = await spawnLocalRuntime({
    dataDir: join(dataDir, 'data'),
    env: { WEBHOOK_SECRET: 'e2e-secret', SUBSCRIPTIONS_FILE: file },
  });
  const info = (await (await fetch(`${runtime.adminUrl}/info`)).json()) as { urls: { eventbridge: string } };
  eventBridge = new EventBridgeClient({
    endpoint: info.urls.eventbridge,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
}, 60_000);

afterAll(async () => {
  eventBridge?.destroy();
  await runtime?.stop();
  await new Promise((resolve) => target?.close(resolve));
  rmSync(dataDir, { recursive: true, force: true });
}, 30_000);

/** Waits until no subscription has a delivery under way (retries included), as the admin API shows. */
async function deliveriesSettled(ms = 10_000): Promise<SubscriptionView[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const views = (await (await fetch(`${runtime.adminUrl}/subscriptions`)).json()) as SubscriptionView[];
    if (views.every((view) => view.inFlight === 0) || Date.now() > deadline) return views;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('npm start with subscriptions', () => {
  it('says in the ready line how many subscriptions it loaded, and which it does not deliver locally', () => {
    expect(runtime.output()).toMatch(
      /^ready in \d+ ms: .* · eventbridge http:\/\/127\.0\.0\.1:\d+ · 2 subscriptions · /m,
    );
    expect(runtime.output()).toContain(
      'subscription "cleanup": lambda targets are delivered on AWS only; the local bus counts its matches',
    );
  });

  it('delivers a matching event put with the SDK client to the URL target, once, and shows it in the admin API', async () => {
    const publisher = createEventBridgePublisher({ client: eventBridge, eventBusName: BUS });
    const results = await publisher.publish([
      {
        Source: SOURCE,
        DetailType: 'contact.changed',
        Detail: '{"EventId":"e-1","significantChanges":["name"]}',
      },
      {
        Source: SOURCE,
        DetailType: 'contact.changed',
        Detail: '{"EventId":"e-2","significantChanges":["department"]}',
      },
      { Source: SOURCE, DetailType: 'contact.deleted', Detail: '{"EventId":"e-3"}' },
    ]);
    expect(results.map((result) => result.ok)).toEqual([true, true, true]);

    const views = await deliveriesSettled();
    expect(received).toEqual([
      {
        path: '/department',
        event: expect.objectContaining({
          id: results[1]!.ok && results[1]!.eventId,
          'detail-type': 'contact.changed',
          source: SOURCE,
          detail: { EventId: 'e-2', significantChanges: ['department'] },
        }),
      },
    ]);
    expect(views).toMatchObject([
      { name: 'department-changes', matched: 1, delivered: 1, recent: [{ eventId: 'e-2' }], dlq: [] },
      { name: 'cleanup', matched: 1, delivered: 0 },
    ]);
  });

  it("fails an entry for another bus, as the workers' publisher sees it", async () => {
    const publisher = createEventBridgePublisher({
      client: eventBridge,
      eventBusName: 'crm-webhook-receiver-prod',
    });
    expect(
      await publisher.publish([{ Source: SOURCE, DetailType: 'contact.changed', Detail: '{}' }]),
    ).toEqual([
      {
        ok: false,
        errorCode: 'InvalidArgument',
        errorMessage: `Event bus crm-webhook-receiver-prod does not exist: the local runtime has the bus ${BUS}.`,
      },
    ]);
  });
});

describe('npm start with a subscriptions file it cannot use', () => {
  const failed = (env: Record<string, string>) =>
    failedStart({ dataDir: join(dataDir, 'failed'), env: { WEBHOOK_SECRET: 'e2e-secret', ...env } });

  it('stops the start with one line and exit 2 for a pattern the local matcher cannot evaluate, or a missing file', async () => {
    const file = join(dataDir, 'invalid.yml');
    writeFileSync(
      file,
      `- { name: typo, pattern: { detail: { n: [{ numbr: [">", 1] }] } }, target: { url: "http://127.0.0.1:9/x" } }\n`,
    );
    expect(await failed({ SUBSCRIPTIONS_FILE: file })).toEqual({
      code: 2,
      lines: [
        `${file}: subscription "typo": pattern: invalid event pattern at detail.n[0]: unknown operator "numbr"; ` +
          'accepted: anything-but, cidr, equals-ignore-case, exists, numeric, prefix, suffix, wildcard',
      ],
    });
    expect(await failed({ SUBSCRIPTIONS_FILE: join(dataDir, 'missing.yml') })).toEqual({
      code: 2,
      lines: [`${join(dataDir, 'missing.yml')}: cannot be read (SUBSCRIPTIONS_FILE names a missing file?)`],
    });
  }, 60_000);
});
