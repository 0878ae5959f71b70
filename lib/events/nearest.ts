import { closest, distance } from 'fastest-levenshtein';
import { FIXED_EVENT_NAMES } from './registry.js';

/**
 * The fixed event name closest to `name` (edit distance), for a hint after a typo: `contac.created` →
 * `contact.created`. For tools and checks outside the Lambdas (the ingest parks an unknown name).
 */
export function nearestEventName(name: string): string {
  return closest(name, FIXED_EVENT_NAMES);
}

/** How many edits away a name outside the catalogue is taken for a typo of a name in it. */
const NEAR_MISS_EDITS = 2;

/**
 * The catalogue's name `name` is most likely a typo of (`contact.craeted` → `contact.created`: at most two
 * edits away), or undefined when it is none (`invoice.created`, a name of its own).
 */
export function nearMissOf(name: string): string | undefined {
  const nearest = nearestEventName(name);
  return nearest !== name && distance(name, nearest) <= NEAR_MISS_EDITS ? nearest : undefined;
}
