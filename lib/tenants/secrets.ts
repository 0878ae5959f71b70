import { nowOf, type SecretSweepDeps, sleepOf, type TenantDeps, TenantError } from './deps.js';
import { withLease } from './lease.js';
import { fingerprint, type SecretSet, secretOf, withoutSecrets, withSecret } from './secret-set.js';
import type { TenantRecord } from './tenant-store.js';

/** The lease of the secret set: one parameter for every context, so its writers take turns. */
const SECRET_SET_KEY = '~secret-set';

const iso = (ms: number) => new Date(ms).toISOString();

/** Reads, changes and writes the secret set under its lease (every context's writers share it). */
export async function changeSecretSet(
  deps: SecretSweepDeps,
  change: (set: SecretSet) => SecretSet,
): Promise<void> {
  await withLease(deps, SECRET_SET_KEY, async () => deps.secrets.write(change(await deps.secrets.read())));
}

/** The secret a tenant's webhooks sign with now (its newest one not retiring), if the set still holds it. */
export async function currentSecret(deps: TenantDeps, record: TenantRecord): Promise<string | undefined> {
  const entry = record.secrets.find((candidate) => candidate.retireAt === undefined);
  return entry && secretOf(await deps.secrets.read(), record.context, entry.fingerprint);
}

/**
 * Makes the ingest accept `secret` for the record's context before anyone signs with it: recorded
 * first (so a crash leaves no secret accepted that no record knows), then added to the set, then
 * waited for until every ingest instance reads it (`propagationMs`). Saves through `save`.
 */
export async function acceptSecret(
  deps: TenantDeps,
  record: TenantRecord,
  secret: string,
  save: (record: TenantRecord) => Promise<TenantRecord>,
): Promise<TenantRecord> {
  const print = fingerprint(secret);
  let saved = await save({
    ...record,
    secrets: [{ fingerprint: print, addedAt: iso(nowOf(deps)) }, ...record.secrets],
  });
  await changeSecretSet(deps, (set) => withSecret(set, record.context, secret));
  saved = await save({
    ...saved,
    secrets: saved.secrets.map((entry) =>
      entry.fingerprint === print ? { ...entry, acceptedAt: iso(nowOf(deps)) } : entry,
    ),
  });
  await waitAccepted(deps, saved, print);
  return saved;
}

/** Waits until the secret `print` has been in the set for `propagationMs` (no wait when it has). */
export async function waitAccepted(deps: TenantDeps, record: TenantRecord, print: string): Promise<void> {
  const entry = record.secrets.find((candidate) => candidate.fingerprint === print);
  const since = Date.parse(entry?.acceptedAt ?? '');
  const left = Number.isFinite(since) ? since + deps.propagationMs - nowOf(deps) : deps.propagationMs;
  if (left <= 0) return;
  deps.progress?.(
    `${record.context}: waiting ${Math.ceil(left / 1000)} s until every ingest reads the new secret (its cache of the secrets parameter)`,
  );
  await sleepOf(deps)(left);
}

/** When a secret replaced now stops being accepted: after the grace period. */
export function retireTime(deps: TenantDeps): string {
  return iso(nowOf(deps) + deps.graceMs);
}

/** The record with every secret but `keep` set to retire at `retireAt` (those already retiring keep their time). */
export function retireOthers(record: TenantRecord, retireAt: string, keep?: string): TenantRecord {
  return {
    ...record,
    secrets: record.secrets.map((entry) =>
      entry.fingerprint === keep || entry.retireAt !== undefined ? entry : { ...entry, retireAt },
    ),
  };
}

/**
 * Removes from the set the secrets whose retirement is due, for every tenant, and from their records:
 * what makes a replaced secret stop being accepted. Never before its time; a record another writer
 * changed meanwhile is left for the next sweep (its secret stays accepted a little longer, never less).
 * Answers how many secrets it retired.
 */
export async function retireDueSecrets(deps: SecretSweepDeps): Promise<number> {
  const now = nowOf(deps);
  let retired = 0;
  for (const record of await deps.tenants.list()) {
    const due = record.secrets.filter(
      (entry) => entry.retireAt !== undefined && Date.parse(entry.retireAt) <= now,
    );
    if (due.length === 0) continue;
    const prints = due.map((entry) => entry.fingerprint);
    const retire = async () => {
      await changeSecretSet(deps, (set) => withoutSecrets(set, record.context, prints));
      const secrets = record.secrets.filter((entry) => !prints.includes(entry.fingerprint));
      const written = await deps.tenants.put({ ...record, secrets, updatedAt: iso(now) });
      if (written) retired += due.length;
      // Deliveries taken during the grace period marked the offboarded context again: the poll forgets it.
      if (written && record.status === 'offboarded' && secrets.length === 0)
        await deps.tenants.forgetDeliveries(record.context);
    };
    // A tenant a command is changing now is left for the next sweep (its record would move under it).
    await withLease(deps, record.context, retire, 0).catch((error: unknown) => {
      if (!(error instanceof TenantError && error.kind === 'busy')) throw error;
    });
  }
  return retired;
}
