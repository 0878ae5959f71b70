import { setTimeout as sleep } from 'node:timers/promises';

export interface TenantLimits {
  /** Calls in flight at once per tenant. */
  inFlight: number;
  /** Calls started in any one second per tenant. */
  perSecond: number;
}

interface Tenant {
  active: number;
  waiting: Array<() => void>;
  /** Start times (ms) of the calls of the last second, oldest first. */
  starts: number[];
}

/**
 * Bounds each tenant's calls: at most `inFlight` at once and `perSecond` started in any sliding
 * second; a call over either bound waits (in arrival order for the in-flight slots). Tenants do
 * not wait for each other.
 */
export function createTenantLimiter(limits: TenantLimits) {
  const tenants = new Map<string, Tenant>();
  const tenantOf = (context: string): Tenant => {
    let tenant = tenants.get(context);
    if (!tenant) {
      tenant = { active: 0, waiting: [], starts: [] };
      tenants.set(context, tenant);
    }
    return tenant;
  };

  return {
    /** Runs `call` for `context` once both bounds allow it. */
    async run<T>(context: string, call: () => Promise<T>): Promise<T> {
      const tenant = tenantOf(context);
      if (tenant.active >= limits.inFlight)
        await new Promise<void>((resolve) => tenant.waiting.push(resolve));
      else tenant.active++;
      try {
        for (;;) {
          const now = performance.now();
          while (tenant.starts.length > 0 && tenant.starts[0]! <= now - 1000) tenant.starts.shift();
          if (tenant.starts.length < limits.perSecond) break;
          await sleep(tenant.starts[0]! + 1000 - now + 1);
        }
        tenant.starts.push(performance.now());
        return await call();
      } finally {
        // The slot passes straight to the next waiter, so a new arrival cannot overtake it.
        const next = tenant.waiting.shift();
        if (next) next();
        else tenant.active--;
      }
    },
  };
}

export type TenantLimiter = ReturnType<typeof createTenantLimiter>;
