import type { CrmAnswer } from './http.js';
import { TABLES } from './tables.js';

/** Faults the REST API can be told to show, per tenant. */
export interface Faults {
  /** Above this many requests in one second, a tenant's request is answered 429 with Retry-After. */
  rateLimitPerSecond?: number;
  /** Until this time (ms since the epoch) every API request is answered 503 with Retry-After. */
  unavailableUntil?: number;
  /** Every API request waits this long before it is answered. */
  slowMs?: number;
  /**
   * Tables whose requests (the archive's, the REST entity's) are refused with this status: 403 an app
   * without rights to the table, 400/404/501 a CRM without it (a tenant without the module).
   */
  refusedTables?: Record<string, number>;
}

/**
 * The fault answer for a tenant's request now, if any, else undefined (after the configured delay).
 * Counts requests per tenant in whole-second windows.
 */
export function createFaults(initial: Faults = {}) {
  let faults: Faults = { ...initial };
  const windows = new Map<string, { second: number; count: number }>();
  return {
    get current(): Faults {
      return { ...faults };
    },
    set(next: Faults) {
      faults = { ...next };
      windows.clear();
    },
    async check(context: string, now = Date.now()): Promise<CrmAnswer | undefined> {
      if (faults.unavailableUntil !== undefined && now < faults.unavailableUntil) {
        const seconds = Math.ceil((faults.unavailableUntil - now) / 1000);
        return {
          status: 503,
          body: { Error: `the tenant ${context} is unavailable (simulated) for ${seconds} s more` },
          headers: { 'retry-after': String(seconds) },
        };
      }
      if (faults.rateLimitPerSecond !== undefined) {
        const second = Math.floor(now / 1000);
        const window = windows.get(context);
        const count = window?.second === second ? window.count + 1 : 1;
        windows.set(context, { second, count });
        if (count > faults.rateLimitPerSecond)
          return {
            status: 429,
            body: {
              Error: `more than ${faults.rateLimitPerSecond} requests per second for ${context} (simulated)`,
            },
            headers: { 'retry-after': '1' },
          };
      }
      if (faults.slowMs) await new Promise((resolve) => setTimeout(resolve, faults.slowMs));
      return undefined;
    },
    /** The refusal of a request of `path` (after `/api/v1`) for a table in `refusedTables`, if any. */
    refusal(path: string, query: URLSearchParams): CrmAnswer | undefined {
      const table = tableOfRequest(path, query);
      const status = table === undefined ? undefined : faults.refusedTables?.[table];
      if (status === undefined) return undefined;
      return {
        status,
        body: {
          Error: `the table ${table} is refused (simulated)\n   at the simulator's faults (a second line: a trace)`,
        },
      };
    },
  };
}

/** The table a request reads: the archive's `$select`ed table, or the REST entity's. */
function tableOfRequest(path: string, query: URLSearchParams): string | undefined {
  const [resource = '', id] = path.split('/').filter(Boolean);
  if (resource.toLowerCase() === 'archive') return query.get('$select')?.split('.')[0]?.trim();
  if (id === undefined) return undefined;
  return [...TABLES.values()].find((table) => table.rest?.toLowerCase() === resource.toLowerCase())?.name;
}

export type FaultGate = ReturnType<typeof createFaults>;
