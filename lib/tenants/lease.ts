import { randomUUID } from 'node:crypto';
import { type SecretSweepDeps, sleepOf, TenantError } from './deps.js';

/** A lease lasts this long unless renewed; a crashed holder blocks the next run this long at most. */
export const LEASE_MS = 30_000;

/**
 * Runs `work` holding the lease on `key` (a context, or the secret set): a second operator waits for
 * it (up to `waitMs`), then finds the first one's work done. The lease is renewed while `work` runs and
 * released after; one left by a crash expires after LEASE_MS.
 */
export async function withLease<T>(
  deps: Omit<SecretSweepDeps, 'secrets' | 'now'>,
  key: string,
  work: () => Promise<T>,
  waitMs = 2 * LEASE_MS,
): Promise<T> {
  const owner = `${deps.owner}#${randomUUID().slice(0, 8)}`;
  const deadline = Date.now() + waitMs;
  while (!(await deps.tenants.lease(key, owner, LEASE_MS))) {
    if (Date.now() > deadline)
      throw new TenantError(
        `${key} is being changed by another operator (its lease is held): try again in a minute`,
        key,
        'busy',
      );
    await sleepOf(deps)(200 + Math.floor(Math.random() * 300));
  }
  const renew = setInterval(
    () => void deps.tenants.lease(key, owner, LEASE_MS).catch(() => undefined),
    LEASE_MS / 3,
  );
  try {
    return await work();
  } finally {
    clearInterval(renew);
    await deps.tenants.release(key, owner).catch(() => undefined);
  }
}
