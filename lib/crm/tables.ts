import { ActivityFieldValuesSchema } from '../events/activity.js';
import { isDynamicEntity } from '../events/catalogue.js';
import { ContactFieldValuesSchema } from '../events/contact.js';

/**
 * Where an entity's rows live in the CRM: its table and primary key (the FieldValues' names), its REST
 * entity, and for a fixed entity the FieldValues its webhook events carry.
 */
export interface CrmTable {
  table: string;
  key: string;
  /** `GET /api/v1/<rest>/{id}`; entities without one are read (and their deletes confirmed) from the archive. */
  rest?: string;
  /**
   * A fixed entity's FieldValues by database name, in the order the CRM writes them (the spec's
   * entities': their created event's FieldValues schema in lib/events/; every one held to the CRM's
   * published samples, tools/samples.ts, by test/reconcile/fields.test.ts): a snapshot selects exactly
   * these from the archive, so it compares with the row field by field and a row the CRM did not
   * change stays equal. A list's or custom table's are the tenant's own, learnt from its rows.
   */
  fields?: readonly string[];
}

/**
 * The catalogue's entities beyond the spec, each in the table of its name keyed `<entity>_id`, as their
 * events' published samples write them: their REST entity where crm-rest-api.md lists one, their fields.
 */
const CATALOGUE_TABLES: Readonly<Record<string, Omit<CrmTable, 'table' | 'key'>>> = {
  associate: { fields: ['associate_id', 'person_id', 'name', 'type', 'deleted'] },
  projectmember: {
    rest: 'ProjectMember',
    fields: ['projectmember_id', 'project_id', 'contact_id', 'person_id'],
  },
  relation: { fields: ['relation_id', 'source_contact_id', 'target_contact_id', 'reldef_id'] },
  salestakeholder: { fields: ['salestakeholder_id', 'sale_id', 'contact_id', 'person_id'] },
  chatsession: { fields: ['chatsession_id', 'chatTopic_id', 'customer_name', 'status'] },
  ticket: { rest: 'Ticket', fields: ['ticket_id', 'contact_id', 'person_id', 'status', 'priority_id'] },
};

/**
 * The fixed entities whose rows can be fetched back (crm-rest-api.md), the one table of them that the
 * reconcile run and the CRM simulator (tools/crm/) read: an appointment's events are `activity.*`. The
 * REST entities are those crm-rest-api.md lists. The catalogue's ({@link CATALOGUE_TABLES}) are
 * unverified against a real tenant: a wrong name fails the run visibly (the archive answers an error;
 * the run fails with a one-line reason naming the table).
 */
export const CRM_TABLES: Readonly<Record<string, CrmTable>> = {
  contact: {
    table: 'contact',
    key: 'contact_id',
    rest: 'Contact',
    fields: Object.keys(ContactFieldValuesSchema.shape),
  },
  person: {
    table: 'person',
    key: 'person_id',
    rest: 'Person',
    fields: ['person_id', 'contact_id', 'associate_id', 'registered', 'updated', 'deleted', 'DeletedDate'],
  },
  sale: {
    table: 'sale',
    key: 'sale_id',
    rest: 'Sale',
    fields: ['sale_id', 'contact_id', 'person_id', 'associate_id', 'amount', 'status', 'saledate'],
  },
  project: {
    table: 'project',
    key: 'project_id',
    rest: 'Project',
    fields: ['project_id', 'associate_id', 'status', 'done', 'endDate'],
  },
  activity: {
    table: 'appointment',
    key: 'appointment_id',
    rest: 'Appointment',
    fields: Object.keys(ActivityFieldValuesSchema.shape),
  },
  document: {
    table: 'document',
    key: 'document_id',
    rest: 'Document',
    fields: ['document_id', 'contact_id', 'person_id', 'project_id', 'sale_id', 'doctmpl_id'],
  },
  ...Object.fromEntries(
    Object.entries(CATALOGUE_TABLES).map(([entity, table]) => [
      entity,
      { table: entity, key: `${entity}_id`, ...table },
    ]),
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
