import type { EntityFilter } from '../config/entities.js';
import type { TenantDeps } from './deps.js';
import { wantedEvents } from './events.js';
import { type OffboardResult, offboard } from './offboard.js';
import { type OnboardResult, onboard } from './onboard.js';
import { rotateSecret } from './rotate.js';
import { retireDueSecrets } from './secrets.js';
import type { TenantRecord } from './tenant-store.js';

/** A tenant as `GET /tenants` and `ops tenants` show it: its record, and its secret's age. */
export type TenantView = Omit<TenantRecord, 'version'> & {
  /** Seconds since the secret its webhooks sign with was accepted. */
  secretAgeSeconds: number | undefined;
  /** Older secrets still accepted, until when. */
  retiring: string[];
};

/** The tenant commands behind the admin API and `npm run ops`: each retires the secrets that are due first. */
export interface TenantService {
  list(): Promise<TenantView[]>;
  onboard(context: string, options: { events?: string[]; errorsEmail?: string }): Promise<OnboardResult>;
  rotate(context: string): Promise<{ record: TenantRecord; retireAt: string }>;
  offboard(context: string, options: { erase?: boolean }): Promise<OffboardResult>;
  /** Removes the secrets whose grace period ended; how many. */
  sweep(): Promise<number>;
}

export function createTenantService(
  deps: TenantDeps & { eraseTenant?: (context: string) => Promise<void> },
  entities: EntityFilter | undefined,
): TenantService {
  const sweep = () => retireDueSecrets(deps);
  return {
    sweep,
    async list() {
      await sweep();
      const now = deps.now?.() ?? Date.now();
      return (await deps.tenants.list()).map(({ version: _, ...record }) => {
        const current = record.secrets.find((entry) => entry.retireAt === undefined);
        const since = Date.parse(current?.acceptedAt ?? current?.addedAt ?? '');
        return {
          ...record,
          secretAgeSeconds: Number.isFinite(since) ? Math.round((now - since) / 1000) : undefined,
          retiring: record.secrets.flatMap((entry) => (entry.retireAt ? [entry.retireAt] : [])),
        };
      });
    },
    async onboard(context, options) {
      await sweep();
      return onboard(deps, context, {
        events: wantedEvents(entities, options.events),
        ...(options.errorsEmail !== undefined && { errorsEmail: options.errorsEmail }),
      });
    },
    async rotate(context) {
      await sweep();
      return rotateSecret(deps, context);
    },
    async offboard(context, options) {
      await sweep();
      return offboard(deps, context, options);
    },
  };
}
