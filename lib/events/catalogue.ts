import type { EventEffect } from './effects.js';

/**
 * The CRM's published event catalogue beyond the spec's ten events: the entities with fixed event
 * names, each with the verbs it is documented with. Lifecycle verbs (`created`, `changed`,
 * `softdeleted`, `deleted`) have their own effect on a row; every other verb is an action
 * (recorded, moves `last*`, leaves the status alone).
 */
export const FIXED_CATALOGUE = {
  associate: ['created', 'changed', 'deleted'],
  document: ['created', 'changed', 'deleted', 'edited'],
  person: ['created', 'changed', 'softdeleted', 'deleted', 'consented', 'unconsented'],
  project: ['created', 'changed', 'deleted'],
  projectmember: ['created', 'changed', 'deleted'],
  relation: ['created', 'changed', 'deleted'],
  sale: ['created', 'changed', 'deleted', 'sold', 'lost', 'completed'],
  salestakeholder: ['created', 'changed', 'deleted'],
  chatsession: ['created', 'changed', 'message'],
  ticket: ['created', 'changed'],
  quote: ['approved', 'rejected', 'sent', 'ordered'],
} as const satisfies Record<string, readonly string[]>;

/**
 * Dynamic names. Lists: `list.<name or id>.created|changed|softdeleted`, whose Entity is
 * `list.<name or id>` as delivered. Custom (extra) tables: `y_<name>.created|changed|deleted`; the CRM
 * names every extra table `y_` plus lower-case letters, digits and underscores, so a typo of a fixed
 * entity (`contac.created`) is not taken for a table.
 */
const LIST_EVENT = /^(list\.[A-Za-z0-9_]{1,64})\.(created|changed|softdeleted)$/;
const TABLE_EVENT = /^(y_[a-z0-9_]{1,64})\.(created|changed|deleted)$/;
const LIST_ENTITY = /^list\.[A-Za-z0-9_]{1,64}$/;
const TABLE_ENTITY = /^y_[a-z0-9_]{1,64}$/;

const LIFECYCLE: Readonly<Record<string, EventEffect>> = {
  created: 'created',
  changed: 'changed',
  softdeleted: 'softdeleted',
  deleted: 'deleted',
};

/** The effect of a verb of the catalogue: its lifecycle effect, else `action`. */
export function effectOfVerb(verb: string): EventEffect {
  return Object.hasOwn(LIFECYCLE, verb) ? LIFECYCLE[verb]! : 'action';
}

/**
 * The entity and verb of a dynamic event name (a list or a custom table), or undefined.
 *
 * @example dynamicEvent('list.category.created') // { entity: 'list.category', verb: 'created' }
 */
export function dynamicEvent(name: string): { entity: string; verb: string } | undefined {
  const match = LIST_EVENT.exec(name) ?? TABLE_EVENT.exec(name);
  return match === null ? undefined : { entity: match[1]!, verb: match[2]! };
}

/** True for an entity the grammar names: `list.<name or id>` or a custom table `y_<name>`. */
export function isDynamicEntity(entity: string): boolean {
  return LIST_ENTITY.test(entity) || TABLE_ENTITY.test(entity);
}
