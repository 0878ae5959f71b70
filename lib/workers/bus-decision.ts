import { ForgetfulMap } from '../forgetful-map.js';
import type { Outcome } from '../hooks.js';

/** What the workers need to know to decide a publication (a {@link Publication}'s rules). */
export interface BusRules {
  /** PUBLISH_ECHOES: publish the changes of IGNORE_ASSOCIATE_IDS too. */
  publishEchoes: boolean;
  /**
   * Whether some subscription can match an event of this name (PUBLISH_DETAIL_TYPES,
   * lib/bus/publish-filter.ts); absent: every change is published.
   */
  matches?: ((detailType: string) => boolean) | undefined;
}

/**
 * Whether a handled event's change goes on the bus: `publish`, or why it does not: publishing is
 * `off`; the event was `not merged` (a conflict, a resend, a snapshot equal to the row); it is an
 * `echo` (without PUBLISH_ECHOES); its row is `erased` (only the deletion itself is published); it is
 * a duplicate whose change was `published already`; or `unsubscribed`: no subscription can match it.
 */
export type BusDecision =
  | 'publish'
  | 'off'
  | 'not merged'
  | 'echo'
  | 'erased'
  | 'published already'
  | 'unsubscribed';

/** What a handled event says about its change, for {@link decideBus}. */
export interface HandledChange {
  /** The event's name: its entry's `detail-type`. */
  event: string;
  outcome: Outcome | 'not merged';
  echo: boolean;
  /** Its row is erased and the event is not the deletion itself. */
  erased?: boolean;
  /** Of a duplicate: whether its change went on the bus already, as far as the worker knows. */
  publishedAlready?: boolean;
}

/**
 * The one decision of whether a change is published. Once per change, at least once: an event merged
 * now (`applied`, `late`) publishes; a `duplicate` publishes unless its change was published already
 * (a row event's history record and the instance's {@link PublishedMemory} say; a state event's SQS
 * receive count); the rest as {@link BusDecision} says.
 *
 * @example
 * decideBus(publication, { event: 'contact.changed', outcome: 'applied', echo: false }) // 'publish'
 */
export function decideBus(rules: BusRules | undefined, change: HandledChange): BusDecision {
  const barred = barredFromBus(rules, change.echo);
  if (barred !== undefined) return barred;
  if (change.outcome === 'not merged') return 'not merged';
  if (change.erased === true) return 'erased';
  if (change.outcome === 'duplicate' && change.publishedAlready === true) return 'published already';
  return rules?.matches === undefined || rules.matches(change.event) ? 'publish' : 'unsubscribed';
}

/**
 * `off` or `echo` when no change of this event is published whatever its outcome, else undefined:
 * a row event's history record is written `unpublished` when undefined.
 */
export function barredFromBus(rules: BusRules | undefined, echo: boolean): 'off' | 'echo' | undefined {
  if (rules === undefined) return 'off';
  return echo && !rules.publishEchoes ? 'echo' : undefined;
}

/**
 * The changes a worker instance published (by row and order key), so that a redelivery it handles
 * does not publish them again. The history record keeps `unpublished` as it was written (no second
 * write per event): a redelivery to another instance, or after the memory started over, publishes
 * once more (at least once).
 */
export interface PublishedMemory {
  has(change: PublishedKey): boolean;
  add(change: PublishedKey): void;
}

/** A row event's change: its row and order key. */
export type PublishedKey = readonly [context: string, entity: string, primaryKey: number, seq: string];

/** A full memory starts over (a copy too many, no loss). */
export function createPublishedMemory(): PublishedMemory {
  const keys = new ForgetfulMap<string, true>();
  return {
    has: (change) => keys.has(JSON.stringify(change)),
    add(change) {
      keys.set(JSON.stringify(change), true);
    },
  };
}
