import { isDynamicEntity } from '../events/catalogue.js';

/** Where an entity's rows live in the CRM: its table and primary key (the FieldValues' names), its REST entity. */
export interface CrmTable {
  table: string;
  key: string;
  /** `GET /api/v1/<rest>/{id}`; entities without one are read (and their deletes confirmed) from the archive. */
  rest?: string;
}

/**
 * The fixed entities whose rows can be fetched back (crm-rest-api.md): an appointment's events are
 * `activity.*`. The REST entities are those crm-rest-api.md lists. The catalogue's entities beyond the
 * spec (associate to ticket) are named as their events' published samples write them (table = the
 * entity, key = `<entity>_id`), unverified against a real tenant: a wrong name fails the run visibly
 * (the archive answers an error; the run fails with a one-line reason naming the table).
 */
export const CRM_TABLES: Readonly<Record<string, CrmTable>> = {
  contact: { table: 'contact', key: 'contact_id', rest: 'Contact' },
  person: { table: 'person', key: 'person_id', rest: 'Person' },
  sale: { table: 'sale', key: 'sale_id', rest: 'Sale' },
  project: { table: 'project', key: 'project_id', rest: 'Project' },
  activity: { table: 'appointment', key: 'appointment_id', rest: 'Appointment' },
  document: { table: 'document', key: 'document_id', rest: 'Document' },
  ...Object.fromEntries(
    ['associate', 'projectmember', 'relation', 'salestakeholder', 'chatsession', 'ticket'].map((entity) => {
      const rest = { projectmember: 'ProjectMember', ticket: 'Ticket' }[entity];
      return [entity, { table: entity, key: `${entity}_id`, ...(rest && { rest }) }];
    }),
  ),
};

/** Entities of the catalogue the receiver stores but cannot compare with the CRM, and why. */
const NOT_IN_CRM: Readonly<Record<string, string>> = {
  quote: 'its events carry no FieldValues: nothing to compare',
};

/** A list's entity by name (`list.category`); one named by its id (`list.12`) has no known table. */
const LIST_BY_NAME = /^list\.([A-Za-z_][A-Za-z0-9_]*)$/;

/**
 * Where `entity`'s rows live in the CRM, undefined when they cannot be fetched back (see
 * {@link whyNotInCrm}): the fixed entities of {@link CRM_TABLES}; a list `list.<name>` in table `<name>`
 * with key `Id`; a custom table `y_<name>` in table `y_<name>` with key `id` (the names the published
 * samples' FieldValues use).
 *
 * @example crmTableOf('list.category') // { table: 'category', key: 'Id' }
 */
export function crmTableOf(entity: string): CrmTable | undefined {
  if (Object.hasOwn(CRM_TABLES, entity)) return CRM_TABLES[entity];
  if (!isDynamicEntity(entity)) return undefined;
  if (entity.startsWith('y_')) return { table: entity, key: 'id' };
  const list = LIST_BY_NAME.exec(entity);
  return list === null ? undefined : { table: list[1]!, key: 'Id' };
}

/** Why {@link crmTableOf} has no table for `entity`: one short reason. */
export function whyNotInCrm(entity: string): string {
  if (Object.hasOwn(NOT_IN_CRM, entity)) return NOT_IN_CRM[entity]!;
  return isDynamicEntity(entity)
    ? 'a list named by its id: its table is unknown'
    : 'not an entity of the CRM';
}
