import type { BusEntry } from '../bus/entry.js';
import type { CrmClient } from '../crm/index.js';
import type { SecretSetStore } from './secret-set.js';
import type { TenantStore } from './tenant-store.js';

/** The names the receiver gives its two webhooks in a tenant: how it finds them again. */
export const DATA_WEBHOOK_NAME = 'crm-webhook-receiver';
export const STATE_WEBHOOK_NAME = 'crm-webhook-receiver-state';

/**
 * How long a replaced secret stays accepted: 15 minutes. The sender signs an event once and tries it
 * 3 times within about 5 s (plus each attempt's own wait for an answer), but an event signed before
 * the CRM saved the new secret may still sit in its queue behind a burst, and the CRM's clock and ours
 * may differ by minutes (the ingest allows 300 s, MAX_CLOCK_SKEW_SECONDS). 15 minutes covers all of it
 * with room; a secret is never retired before, only at the first sweep after.
 */
export const SECRET_GRACE_MS = 15 * 60_000;

/** The CRM calls the tenant commands make. */
export type TenantCrm = Pick<
  CrmClient,
  'tenantState' | 'listWebhooks' | 'getWebhook' | 'createWebhook' | 'patchWebhook' | 'deleteWebhook'
>;

/** What the tenant commands need: the CRM, the secret set, the records, and the receiver's own facts. */
export interface TenantDeps {
  crm: TenantCrm;
  secrets: SecretSetStore;
  tenants: TenantStore;
  /** The receiver's delivery URL (the webhooks' TargetUrl). */
  targetUrl: string;
  /** STATE_EVENT_TOKEN, sent by the state webhook in its Headers when set. */
  stateEventToken?: string | undefined;
  /**
   * How long a secret written to the set takes to be accepted by every ingest instance: its cache of
   * the secrets parameter (300 s on a stage, 1 s locally) and a margin.
   */
  propagationMs: number;
  /** How long a replaced secret stays accepted (SECRET_GRACE_MS). */
  graceMs: number;
  /** Who runs the command (`ops@host`, `admin-api`), in leases. */
  owner: string;
  /** Points the CRM client at a tenant's API as its state names it (lib/tenants/tenant-state.ts). */
  follow?: (context: string, api: string) => void;
  /** Tells the operator what a long step waits for (`ops` writes it to stderr). */
  progress?: (line: string) => void;
  /** Publishes a lifecycle event; none by default. */
  publish?: (entry: BusEntry) => Promise<void>;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

/** Why a tenant command did not do what it was asked; the message says what to do. */
export class TenantError extends Error {
  constructor(
    message: string,
    readonly context: string,
    readonly kind: 'busy' | 'conflict' | 'not-running' | 'not-onboarded' | 'refused',
  ) {
    super(message);
    this.name = 'TenantError';
  }
}

/** What retiring due secrets needs (the scheduled function has no CRM): the set, the records, the clock. */
export type SecretSweepDeps = Pick<TenantDeps, 'secrets' | 'tenants' | 'owner' | 'sleep' | 'now'>;

export const nowOf = (deps: Pick<TenantDeps, 'now'>) => deps.now?.() ?? Date.now();
export const sleepOf = (deps: Pick<TenantDeps, 'sleep'>) =>
  deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
