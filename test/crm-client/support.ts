import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CrmCredentials, SystemUserCredentials } from '../../lib/config/crm.js';
import { type CrmClientOptions, createCrmClient } from '../../lib/crm/client.js';
import { type CrmOptions, type RunningCrm, startCrm } from '../../tools/crm/start.js';

export const BASIC: CrmCredentials = { type: 'basic', user: 'crm', password: 'crm' };

/** The CRM simulator on a fresh data directory, in this process. */
export async function simulator(options: Partial<CrmOptions> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'crm-client-'));
  const crm = await startCrm({ dataDir: dir, delivery: { retryDelaysMs: [1, 1] }, ...options });
  return {
    crm,
    async stop() {
      await crm.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The system user credentials the simulator accepts (its generated app key). */
export function systemUser(crm: RunningCrm): SystemUserCredentials {
  return {
    type: 'systemUser',
    systemUserToken: crm.auth.systemUserToken,
    applicationToken: crm.auth.applicationToken,
    privateKey: crm.auth.appPrivateKey!,
  };
}

/** What the client sent and the CRM answered, call by call: a wrapper over `underlying`, not a mock. */
export function recordingFetch(underlying: typeof fetch = fetch) {
  const calls: Array<{ method: string; path: string; status: number }> = [];
  const wrapped: typeof fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const response = await underlying(input, init);
    calls.push({ method: init?.method ?? 'GET', path: url.pathname, status: response.status });
    return response;
  };
  return { fetch: wrapped, calls };
}

/** A client of the simulator: `{ContextIdentifier}` in its API base, Basic unless told otherwise. */
export function clientOf(crm: RunningCrm, options: Partial<CrmClientOptions> = {}) {
  return createCrmClient({
    apiUrl: crm.apiUrl('{ContextIdentifier}'),
    credentials: { '*': BASIC },
    ...options,
  });
}
