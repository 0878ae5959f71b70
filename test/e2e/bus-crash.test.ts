import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it, vi } from 'vitest';
import type { QueueView } from '../../dashboard/views.js';
import type { SubscriptionView } from '../../local/bus/views.js';
import { getJson } from '../../tools/http-client.js';
import { buildSampleBody } from '../../tools/samples.js';
import { postDelivery, type RuntimeProcess, spawnLocalRuntime } from '../support/local-runtime.js';

/**
 * `kill -9` of `npm start` while its bus delivers: a subscription's target answers 500 to the first
 * POST of every event and 200 to the next, so at any moment deliveries wait for their retry. The
 * runtime is killed right after the target answered its 30th 500 (so at least that delivery waits),
 * then restarted on the same DATA_DIR while the sender carries on: every change the ingest accepted
 * must reach the target with a 200, and none may land in the DLQ.
 */
const SECRET = 'bus-crash-secret';
const CONTEXT = 'CustBusCrash';
const CHANGES = 120;
const KILL_AT_FAILURE = 30;

let dataDir: string | undefined;
let runtime: RuntimeProcess | undefined;
let target: Server | undefined;

afterAll(async () => {
  await runtime?.stop();
  await new Promise((resolve) => target?.close(resolve));
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}, 30_000);

it('delivers every accepted change to a target that fails once, across a kill -9 of the runtime', async () => {
  // Arrange: the target, the subscriptions file, the runtime.
  dataDir = mkdtempSync(join(tmpdir(), 'crm-local-bus-crash-'));
  const answered = new Map<string, number>();
  const delivered = new Set<string>();
  let failures = 0;
  let killing: Promise<void> | undefined;
  target = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk));
    req.on('end', () => {
      const event = JSON.parse(body) as { id: string; detail: { EventId: string } };
      const first = !answered.has(event.id);
      answered.set(event.id, (answered.get(event.id) ?? 0) + 1);
      if (first) failures++;
      else delivered.add(event.detail.EventId);
      res.statusCode = first ? 500 : 200;
      res.end();
      if (failures === KILL_AT_FAILURE) killing ??= runtime?.kill();
    });
  });
  await new Promise<void>((resolve) => target!.listen(0, '127.0.0.1', resolve));
  const file = join(dataDir, 'subscriptions.yml');
  writeFileSync(
    file,
    `- name: created
  pattern: { detail-type: [contact.created] }
  target: { url: "http://127.0.0.1:${(target.address() as AddressInfo).port}/created" }
`,
  );
  const env = {
    WEBHOOK_SECRET: SECRET,
    SUBSCRIPTIONS_FILE: file,
    LOCAL_BUS_BACKOFF_MS: '400',
  };
  runtime = await spawnLocalRuntime({ dataDir: join(dataDir, 'data'), env });
  const { port, adminPort, adminUrl } = runtime;
  const bodies = Array.from({ length: CHANGES }, (_, i) =>
    buildSampleBody('contact.created', { context: CONTEXT, primaryKey: 7000 + i }),
  );
  const changes = bodies.map((body) => String(body.EventId));

  /** POSTs a delivery as the CRM does; whether the ingest answered 200. */
  const sent = async (body: Record<string, unknown>) => {
    try {
      const answer = await postDelivery(`http://127.0.0.1:${port}/webhook`, body, SECRET);
      await answer.arrayBuffer();
      return answer.status === 200;
    } catch {
      return false;
    }
  };

  // Act: 8 senders; a delivery the runtime did not answer 200 is sent again once it is back.
  const accepted = new Set<string>();
  let next = 0;
  const sending = Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++]!;
        while (!(await sent(body))) await new Promise((resolve) => setTimeout(resolve, 100));
        accepted.add(String(body.EventId));
      }
    }),
  );
  await vi.waitFor(() => expect(killing, `the kill at ${KILL_AT_FAILURE} failed POSTs`).toBeDefined(), {
    timeout: 60_000,
    interval: 50,
  });
  await killing;
  const deliveredBeforeKill = delivered.size;
  runtime = await spawnLocalRuntime({ dataDir: join(dataDir, 'data'), env, port, adminPort });
  await sending;
  // The queues and the bus settle.
  await vi.waitFor(
    async () => {
      const queues = await getJson<QueueView[]>(`${adminUrl}/queues`);
      const [view] = await getJson<SubscriptionView[]>(`${adminUrl}/subscriptions`);
      expect(queues.filter((q) => q.visible + q.inFlight + q.delayed > 0)).toEqual([]);
      expect(view?.inFlight).toBe(0);
    },
    { timeout: 90_000, interval: 50 },
  );

  // Assert: every accepted change answered 200 by the target, nothing dead-lettered anywhere.
  expect(accepted.size).toBe(CHANGES);
  expect(changes.filter((eventId) => !delivered.has(eventId))).toEqual([]);
  const [view] = await getJson<SubscriptionView[]>(`${adminUrl}/subscriptions`);
  expect(view?.dlq).toEqual([]);
  const queues = await getJson<QueueView[]>(`${adminUrl}/queues`);
  expect(queues.filter((queue) => queue.dlq > 0)).toEqual([]);
  // And the kill did catch deliveries waiting in the bus, which the restart resumed.
  expect(runtime.output()).toMatch(/resumed [1-9]\d* deliveries from .*bus-journal\.ndjson/);
  expect(deliveredBeforeKill).toBeLessThan(CHANGES);
  console.log(
    `bus crash test: ${deliveredBeforeKill} of ${CHANGES} changes delivered before the kill, ` +
      `${/resumed (\d+) deliveries/.exec(runtime.output())?.[1]} deliveries resumed from the journal, ` +
      `${[...answered.values()].reduce((sum, n) => sum + n, 0)} POSTs in all; none lost`,
  );
}, 180_000);
