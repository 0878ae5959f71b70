import { closest } from 'fastest-levenshtein';
import { FIXED_EVENT_NAMES } from './registry.js';

/**
 * The fixed event name closest to `name` (edit distance), for a hint after a typo: `contac.created` →
 * `contact.created`. For tools and checks outside the Lambdas (the ingest parks an unknown name).
 */
export function nearestEventName(name: string): string {
  return closest(name, FIXED_EVENT_NAMES);
}
