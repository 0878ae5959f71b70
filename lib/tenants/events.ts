import type { EntityFilter } from '../config/entities.js';
import { FIXED_EVENT_NAMES, familyOf } from '../events/index.js';

/**
 * The data webhook's Events: every fixed event of the registry whose entity ENTITIES stores (all when
 * unset), or the names given (`--events`), each one the receiver knows (a list's or custom table's
 * events by their dynamic names, `list.category.created`, `y_equipment.changed`). Throws a one-line
 * RangeError naming what is not accepted.
 */
export function wantedEvents(entities: EntityFilter | undefined, given?: readonly string[]): string[] {
  if (given !== undefined && given.length > 0) {
    const unknown = given.filter((name) => {
      const entity = familyOf(name)?.entity;
      return entity === undefined || entity === 'webhook' || familyOf(name)?.synthetic === true;
    });
    if (unknown.length > 0)
      throw new RangeError(
        `events ${unknown.join(', ')} are not events the receiver takes: name fixed events (contact.created, sale.sold, ...), list.<name>.<verb> or y_<table>.<verb>`,
      );
    return [...new Set(given)];
  }
  return FIXED_EVENT_NAMES.filter((name) => {
    const entity = familyOf(name)?.entity;
    return entity !== undefined && entity !== 'webhook' && (entities?.(entity) ?? true);
  });
}
