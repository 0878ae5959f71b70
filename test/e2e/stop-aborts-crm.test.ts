import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it, vi } from 'vitest';
import { type RuntimeProcess, spawnLocalRuntime } from '../support/local-runtime.js';
import { type SilentCrm, startSilentCrm } from '../support/silent-crm.js';

/**
 * Ctrl-C on `npm start` while the reconcile function waits for a CRM that never answers (its calls
 * may take CRM_TIMEOUT_MS, here 10 minutes): the stop aborts the call in flight, so the runtime exits
 * at once instead of waiting out its 15 s limit.
 */
const dirs: string[] = [];
let silentCrm: SilentCrm | undefined;
let runtime: RuntimeProcess | undefined;

afterAll(async () => {
  await runtime?.kill();
  await silentCrm?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}, 30_000);

it('stopping npm start aborts a CRM call in flight: it exits within seconds, cleanly', async () => {
  const crm = await startSilentCrm();
  silentCrm = crm;
  const dataDir = mkdtempSync(join(tmpdir(), 'crm-stop-e2e-'));
  dirs.push(dataDir);
  runtime = await spawnLocalRuntime({
    dataDir,
    env: {
      WEBHOOK_SECRET: 'e2e-stop-secret',
      CRM_API_URL: silentCrm.apiUrl,
      CRM_CREDENTIALS: JSON.stringify({ '*': { type: 'basic', user: 'u', password: 'p-never-answered' } }),
      CRM_TIMEOUT_MS: '600000',
    },
    readyTimeoutMs: 60_000,
  });
  const queued = await fetch(`${runtime.adminUrl}/reconcile?context=CustStop&from=2026-11-27T10:00:00Z`, {
    method: 'POST',
  });
  expect(queued.status).toBe(200);
  // The reconcile function's call is in flight.
  await vi.waitFor(() => expect(crm.connections(), 'connections to the CRM').toBeGreaterThan(0), {
    timeout: 15_000,
    interval: 50,
  });

  const started = performance.now();
  const code = await runtime.stop();
  const stopMs = performance.now() - started;

  console.log(`[stop] npm start stopped in ${Math.round(stopMs)} ms with a CRM call in flight`);
  // npm itself may end by the signal (null); the runtime says it stopped, not that it gave up waiting.
  expect(code === 0 || code === null).toBe(true);
  expect(runtime.output()).toMatch(/SIGTERM: stopping[\s\S]*stopped/);
  expect(runtime.output()).not.toContain('did not stop within 15 s');
  expect(stopMs).toBeLessThan(5_000);
}, 90_000);
