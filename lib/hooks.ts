import type {
  ActivityChanged,
  ActivityCreated,
  ActivityDeleted,
  ContactChanged,
  ContactCreated,
  ContactDeleted,
  ContactSoftDeleted,
  EntityEvent,
  RowEvent,
  WebhookStateEvent,
} from './events/index.js';
import { isSpecEvent } from './events/index.js';
import type { Row, Webhook } from './store/types.js';

/** How the event met the stored picture: moved it forward, merged late, or was already there. */
export type Outcome = 'applied' | 'late' | 'duplicate';

export interface HookInfo {
  outcome: Outcome;
  /** The SQS message id, handy as an idempotency key for downstream calls. */
  messageId: string;
}

type Hook<E, T> = (event: E, current: T, info: HookInfo) => void | Promise<void>;

/**
 * Integrator extension point: one optional function per event, called after the row (or webhook) is
 * written, with the event and the row as now stored. Hooks run at least once per event: a redelivery
 * (outcome `duplicate`) calls them again, so they must be idempotent. A hook that throws fails only its
 * own record, which SQS redelivers (and, after maxReceiveCount, parks in the DLQ). Events changed by
 * IGNORE_ASSOCIATE_IDS (echoes of the integration's own writes) never reach a hook.
 *
 * @example
 * export const hooks: Hooks = {
 *   async onContactChanged(event, row) {
 *     if (row.changedFields.includes('department')) await refreshDepartment(row.primaryKey);
 *   },
 * };
 */
export interface Hooks {
  onContactCreated?: Hook<ContactCreated, Row>;
  onContactChanged?: Hook<ContactChanged, Row>;
  onContactSoftDeleted?: Hook<ContactSoftDeleted, Row>;
  onContactDeleted?: Hook<ContactDeleted, Row>;
  onActivityCreated?: Hook<ActivityCreated, Row>;
  onActivityChanged?: Hook<ActivityChanged, Row>;
  onActivityDeleted?: Hook<ActivityDeleted, Row>;
  onWebhookStateChanged?: Hook<WebhookStateEvent, Webhook>;
  /** Every event of the catalogue beyond the spec's ten (person, sale, lists, custom tables, ...). */
  onEntityEvent?: Hook<EntityEvent, Row>;
}

/** The registry the workers use. Shipped empty: register hooks here. */
export const hooks: Hooks = {};

/** Calls the hook registered for a row event, if any. */
export async function runRowHook(registry: Hooks, event: RowEvent, row: Row, info: HookInfo): Promise<void> {
  if (!isSpecEvent(event)) return registry.onEntityEvent?.(event, row, info);
  switch (event.Event) {
    case 'contact.created':
      return registry.onContactCreated?.(event, row, info);
    case 'contact.changed':
      return registry.onContactChanged?.(event, row, info);
    case 'contact.softdeleted':
      return registry.onContactSoftDeleted?.(event, row, info);
    case 'contact.deleted':
      return registry.onContactDeleted?.(event, row, info);
    case 'activity.created':
      return registry.onActivityCreated?.(event, row, info);
    case 'activity.changed':
      return registry.onActivityChanged?.(event, row, info);
    case 'activity.deleted':
      return registry.onActivityDeleted?.(event, row, info);
  }
}
