import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RunningCrm, startCrm } from '../../tools/crm/start.js';
import { adminJson, type RuntimeProcess, spawnLocalRuntime } from '../support/local-runtime.js';

/**
 * The tenant commands of `npm start`'s admin API against the CRM simulator: onboard, the first
 * delivery taken, rotate, offboard, through a real runtime (its ingest reading the secrets parameter
 * of DATA_DIR through the local SSM endpoint).
 */
const CONTEXT = 'Cust7';
const dirs: string[] = [];
let crm: RunningCrm;
let runtime: RuntimeProcess;

const dir = () => {
  const made = mkdtempSync(join(tmpdir(), 'tenants-e2e-'));
  dirs.push(made);
  return made;
};

beforeAll(async () => {
  crm = await startCrm({ dataDir: dir(), delivery: { retryDelaysMs: [100, 400] } });
  const envFile = join(dir(), '.env');
  writeFileSync(
    envFile,
    `CRM_API_URL=${crm.url}/{ContextIdentifier}/api/v1\nCRM_CREDENTIALS='{"*":{"type":"basic","user":"crm","password":"crm"}}'\n`,
  );
  runtime = await spawnLocalRuntime({ dataDir: dir(), env: { ENV_FILE: envFile }, readyTimeoutMs: 60_000 });
}, 90_000);

afterAll(async () => {
  await runtime?.stop();
  await crm?.stop();
  for (const made of dirs) rmSync(made, { recursive: true, force: true });
}, 30_000);

const admin = <T = Record<string, unknown>>(
  path: string,
  method = 'GET',
  headers: Record<string, string> = {},
) => adminJson<T>(runtime.adminUrl, path, { method, headers });

/** A contact created in the CRM, its deliveries done: the webhook's counters. */
async function deliverOne() {
  crm.core.change(CONTEXT, { op: 'create', table: 'contact', fields: { name: 'A' } } as never);
  await crm.core.dispatcher.idle();
  return crm.core.webhook(CONTEXT, 1);
}

describe('tenants through the admin API of npm start', () => {
  it('refuses a browser POST without the page token', async () => {
    const refused = await admin(`/tenants?context=${CONTEXT}`, 'POST', { 'sec-fetch-site': 'same-origin' });
    expect(refused.status).toBe(403);
    expect(crm.core.store.context(CONTEXT).webhooks).toEqual([]);
  });

  it('onboards, takes the first delivery, rotates with none refused, and offboards', async () => {
    const onboarded = await admin<{ record: Record<string, unknown>; changes: string[] }>(
      `/tenants?context=${CONTEXT}&errorsEmail=ops@example.com`,
      'POST',
    );
    expect(onboarded.status).toBe(200);
    expect(onboarded.body.record).toMatchObject({ status: 'active', dataWebhookId: 1, stateWebhookId: 2 });
    expect(crm.core.webhook(CONTEXT, 1).targetUrl).toBe(runtime.webhookUrl);
    expect(await deliverOne()).toMatchObject({ totalErrors: 0, totalCalls: 1, state: 'Active' });
    // The contact worker stores the row from the queue: it shows within seconds.
    await vi.waitFor(
      async () =>
        expect((await admin(`/rows/${CONTEXT}/contact/1`)).status, 'GET of the stored row').toBe(200),
      { timeout: 10_000, interval: 100 },
    );

    const listed = await admin<Array<Record<string, unknown>>>('/tenants');
    expect(listed.body).toEqual([
      expect.objectContaining({ context: CONTEXT, status: 'active', retiring: [], tenantState: 'Running' }),
    ]);
    // The first delivery's Timestamp, from the marker its worker raised.
    expect(listed.body[0]!.lastDelivery).toMatch(/^\d{4}-\d\d-\d\dT/);

    const rotated = await admin<{ retireAt: string }>(`/tenants/${CONTEXT}/rotate-secret`, 'POST');
    expect(rotated.status).toBe(200);
    expect(await deliverOne()).toMatchObject({ totalErrors: 0, totalCalls: 2 });
    expect((await admin<Array<{ retiring: string[] }>>('/tenants')).body[0]!.retiring).toEqual([
      rotated.body.retireAt,
    ]);

    const offboarded = await admin<{ deleted: number[]; notes: string[]; erasure: Record<string, unknown> }>(
      `/tenants/${CONTEXT}?erase=true`,
      'DELETE',
    );
    expect(offboarded.status).toBe(200);
    expect(offboarded.body.deleted).toEqual([1, 2]);
    // --erase: the whole-tenant erasure of lib/erasure, its two contacts' rows and history.
    expect(offboarded.body.notes).toEqual([]);
    expect(offboarded.body.erasure).toMatchObject({ rows: 2, complete: true });
    expect(crm.core.store.context(CONTEXT).webhooks).toEqual([]);
    expect(runtime.output()).not.toMatch(/"Secret"|secret":/);
  }, 60_000);

  it('answers a command for a tenant that is not onboarded with one line', async () => {
    const refused = await admin('/tenants/Nobody/rotate-secret', 'POST');
    expect(refused).toEqual({ status: 404, body: { error: 'Nobody is not onboarded: onboard it first' } });
  });
});
