import type { EntityFilter } from '../config/entities.js';
import { CrmApiError } from '../crm/index.js';
import type { TenantDeps } from './deps.js';
import { wantedEvents } from './events.js';
import { type OffboardResult, offboard } from './offboard.js';
import { type OnboardResult, onboard } from './onboard.js';
import { rotateSecret } from './rotate.js';
import { retireDueSecrets } from './secrets.js';
import { observeState } from './tenant-state.js';
import type { TenantRecord } from './tenant-store.js';
import { type TenantActivity, type TenantView, tenantView } from './view.js';

/** The tenant commands behind the admin API and `npm run ops`: each retires the secrets that are due first. */
export interface TenantService {
  list(): Promise<TenantView[]>;
  onboard(context: string, options: { events?: string[]; errorsEmail?: string }): Promise<OnboardResult>;
  rotate(context: string): Promise<{ record: TenantRecord; retireAt: string }>;
  offboard(context: string, options: { erase?: boolean }): Promise<OffboardResult>;
  /** Removes the secrets whose grace period ended; how many. */
  sweep(): Promise<number>;
}

/** Tenants looked at in parallel by `list`. */
const LIST_BATCH = 8;

export function createTenantService(
  deps: TenantDeps & { eraseTenant?: (context: string) => Promise<unknown> },
  entities: EntityFilter | undefined,
  activity?: TenantActivity,
): TenantService {
  const sweep = () => retireDueSecrets(deps);
  /** Runs a command again, once, when the tenant's old host answered 421 (it moved meanwhile; the run follows it). */
  const followingMoves = async <T>(work: () => Promise<T>): Promise<T> => {
    await sweep();
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof CrmApiError) || error.status !== 421) throw error;
      return work();
    }
  };
  return {
    sweep,
    async list() {
      await sweep();
      const now = deps.now?.() ?? Date.now();
      const look = async (record: TenantRecord): Promise<TenantRecord> => {
        if (record.status === 'offboarded') return record;
        const { fields } = await observeState(deps, record.context, record);
        if (fields.tenantState === record.tenantState && fields.endpoint === record.endpoint) return record;
        // Another writer first: the next look records it.
        await deps.tenants.put({ ...record, ...fields });
        return { ...record, ...fields };
      };
      // A few tenants at a time: hundreds of state and table reads at once would be a burst on both.
      const stored = await deps.tenants.list();
      const views: TenantView[] = [];
      for (let at = 0; at < stored.length; at += LIST_BATCH)
        views.push(
          ...(await Promise.all(
            stored
              .slice(at, at + LIST_BATCH)
              .map(async (record) => tenantView(await look(record), now, activity)),
          )),
        );
      return views;
    },
    onboard(context, options) {
      const events = wantedEvents(entities, options.events);
      return followingMoves(() =>
        onboard(deps, context, {
          events,
          ...(options.errorsEmail !== undefined && { errorsEmail: options.errorsEmail }),
        }),
      );
    },
    rotate: (context) => followingMoves(() => rotateSecret(deps, context)),
    offboard: (context, options) => followingMoves(() => offboard(deps, context, options)),
  };
}
