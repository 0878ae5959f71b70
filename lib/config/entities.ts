import { FIXED_ENTITIES, isDynamicEntity } from '../events/index.js';
import { ConfigError, listEnv } from './env.js';

type Env = Record<string, string | undefined>;

/** Whether the rows of an entity are stored. */
export type EntityFilter = (entity: string) => boolean;

/** Prefix patterns: every list, every custom table, everything. */
const PATTERNS = ['list.*', 'y_*', '*'];

/**
 * ENTITIES, read once: a comma-separated list of entities whose rows are stored; unset or blank
 * means every entity (undefined). An entry is a fixed entity of the catalogue (`contact`, `person`,
 * `sale`, ...), one list (`list.category`) or custom table (`y_equipment`), or a pattern: `list.*`
 * (every list), `y_*` (every custom table), `*` (everything). Anything else is refused at start.
 *
 * @example readEntities({ ENTITIES: 'contact,activity,list.*' })!('list.category') === true
 */
export function readEntities(env: Env = process.env): EntityFilter | undefined {
  const entries = listEnv('ENTITIES', env);
  if (entries.length === 0) return undefined;
  for (const entry of entries) {
    if (!FIXED_ENTITIES.includes(entry) && !isDynamicEntity(entry) && !PATTERNS.includes(entry)) {
      throw new ConfigError(
        `ENTITIES: ${JSON.stringify(entry)} is not an entity; ENTITIES must be a comma-separated list of ${FIXED_ENTITIES.join(', ')}, list.<name>, y_<table>, list.*, y_* or *`,
        'ENTITIES',
      );
    }
  }
  const exact = new Set(entries);
  const everything = exact.has('*');
  const lists = exact.has('list.*');
  const tables = exact.has('y_*');
  return (entity) =>
    everything ||
    exact.has(entity) ||
    (lists && entity.startsWith('list.')) ||
    (tables && entity.startsWith('y_'));
}
