import type {
  ActivityChanged,
  ActivityCreated,
  ActivityDeleted,
  ContactChanged,
  ContactCreated,
  ContactDeleted,
  ContactSoftDeleted,
  DeliveryEvent,
  EntityEvent,
  WebhookStateEvent,
} from './events/index.js';
import { familyOf } from './events/index.js';
import type { Row, Webhook } from './model/types.js';

/** How the event met the stored picture: moved it forward, merged late, or was already there. */
export type Outcome = 'applied' | 'late' | 'duplicate';

export interface HookInfo {
  outcome: Outcome;
  /** The SQS message id, handy as an idempotency key for downstream calls. */
  messageId: string;
}

type Hook<E, T> = (event: E, current: T, info: HookInfo) => void | Promise<void>;

/**
 * Integrator extension point: one optional function per event family, named by the family's `hook`
 * in the registry (lib/events/registry.ts), called after the row (or webhook) is written, with the
 * event and the row as now stored. The spec's events have typed hooks; every family whose hook is
 * `onEntityEvent` shares that one, with the event as delivered. Hooks run at least once per event: a
 * redelivery (outcome `duplicate`) calls them again, so they must be idempotent. A hook that throws
 * fails only its own record, which SQS redelivers (and, after maxReceiveCount, parks in the DLQ).
 * Events changed by IGNORE_ASSOCIATE_IDS (echoes of the integration's own writes) never reach a hook.
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

/** The hooks the workers run. Shipped empty: add yours here. */
export const hooks: Hooks = {};

/**
 * The hook the event registry names for an event (its families' hook names are typed by {@link Hooks},
 * so a typo there fails to compile); throws for an event no family knows.
 */
export function hookName(event: string): keyof Hooks {
  const name = familyOf(event)?.hook;
  if (name === undefined) throw new Error(`no event family for "${event}": no hook to run`);
  return name;
}

/**
 * Calls the hook the event registry names for the event's family, if `hooks` has one. The registry
 * is what pairs an event with its hook's type, so the call goes through the loosest of them.
 */
export async function runHook(
  hooks: Hooks,
  event: DeliveryEvent,
  current: Row | Webhook,
  info: HookInfo,
): Promise<void> {
  const hook = hooks[hookName(event.Event)] as Hook<DeliveryEvent, Row | Webhook> | undefined;
  await hook?.(event, current, info);
}
