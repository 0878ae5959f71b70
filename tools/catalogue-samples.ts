import { crmTableOf } from '../lib/crm/tables.js';
import { CATALOGUE_FAMILIES, type EventFamily } from '../lib/events/index.js';

/**
 * Every event of the catalogue beyond the spec's ten: the fixed names, and the dynamic ones by
 * example (a list, `list.category`, and a custom table, `y_equipment`).
 */
export const CATALOGUE_SAMPLE_EVENTS: readonly string[] = [
  ...CATALOGUE_FAMILIES.keys(),
  'list.category.created',
  'list.category.changed',
  'list.category.softdeleted',
  'y_equipment.created',
  'y_equipment.changed',
  'y_equipment.deleted',
];

/** FieldValues of a created event per entity, shaped like the CRM's published samples. */
const FIELD_VALUES: Record<string, (primaryKey: number) => Record<string, unknown>> = {
  associate: (id) => ({ associate_id: id, person_id: 77, name: 'JD', type: 1, deleted: 0 }),
  document: (id) => ({
    document_id: id,
    contact_id: 1234,
    person_id: 77,
    project_id: 0,
    sale_id: 0,
    doctmpl_id: 3,
  }),
  person: (id) => ({
    person_id: id,
    contact_id: 1234,
    associate_id: 5,
    registered: '2025-05-14T16:11:02.4593434+02:00',
    updated: '0001-01-01T00:00:00',
    deleted: 0,
    DeletedDate: '0001-01-01T00:00:00',
  }),
  project: (id) => ({ project_id: id, associate_id: 5, status: 1, done: 0, endDate: '0001-01-01T00:00:00' }),
  projectmember: (id) => ({ projectmember_id: id, project_id: 12, contact_id: 1234, person_id: 77 }),
  relation: (id) => ({ relation_id: id, source_contact_id: 1234, target_contact_id: 4321, reldef_id: 2 }),
  sale: (id) => ({
    sale_id: id,
    contact_id: 1234,
    person_id: 77,
    associate_id: 5,
    amount: 125000.5,
    status: 1,
    saledate: '2025-06-30T00:00:00',
  }),
  salestakeholder: (id) => ({ salestakeholder_id: id, sale_id: 88, contact_id: 1234, person_id: 77 }),
  chatsession: (id) => ({ chatsession_id: id, chatTopic_id: 2, customer_name: 'Ann', status: 1 }),
  ticket: (id) => ({ ticket_id: id, contact_id: 1234, person_id: 77, status: 1, priority_id: 2 }),
  list: (id) => ({ Id: id, Name: 'Customer', Tooltip: '', Deleted: 0, Rank: 3 }),
  // A custom table's created and changed FieldValues are typed strings, exactly as the CRM writes them.
  y_: (id) => ({
    id: `[I:${id}]`,
    x_name: '[S:Drill 18V]',
    x_bought: '[DT:09/16/2025 10:11:12]',
    x_price: '[F:129.9]',
    x_active: '[B:True]',
    x_contact: '[I:1234]',
  }),
};

/** The Changes of an action event: the fields the action moved. */
const ACTION_CHANGES: Record<string, string[]> = {
  consented: ['legalBase', 'consentSource', 'updated'],
  unconsented: ['legalBase', 'consentSource', 'updated'],
  sold: ['status', 'done', 'updated'],
  lost: ['status', 'done', 'reason_id', 'updated'],
  completed: ['completed', 'updated'],
  edited: ['checkedOut', 'updated'],
  message: ['messages', 'updated'],
  approved: ['approvalStatus', 'updated'],
  rejected: ['approvalStatus', 'updated'],
  sent: ['sentDate', 'updated'],
  ordered: ['orderedDate', 'updated'],
};

/**
 * The event-specific part of a catalogue delivery (Changes, Entity, FieldValues or Values), to spread
 * over the envelope. Created events carry FieldValues; changed ones the fields they changed (a custom
 * table's carry typed FieldValues too); softdeleted ones the deleted fields; deleted ones plain
 * Values; actions the fields the action moved.
 */
export function catalogueSampleFields(
  event: string,
  family: EventFamily,
  primaryKey: number,
): Record<string, unknown> {
  const verb = event.slice(event.lastIndexOf('.') + 1);
  const kind = family.entity.startsWith('y_')
    ? 'y_'
    : family.entity.startsWith('list.')
      ? 'list'
      : family.entity;
  const values = (FIELD_VALUES[kind] ?? ((id: number) => ({ id })))(primaryKey);
  const entity = { Entity: family.entity };
  switch (family.effect) {
    case 'created':
      return { ...entity, Changes: Object.keys(values), FieldValues: values };
    case 'changed': {
      const changed = Object.keys(values).slice(1, 3);
      if (kind !== 'y_') return { ...entity, Changes: [...changed, 'updated'] };
      return { ...entity, Changes: changed, FieldValues: values };
    }
    case 'softdeleted':
      return { ...entity, Changes: kind === 'list' ? ['Deleted'] : ['deleted', 'DeletedDate'] };
    case 'deleted':
      return {
        ...entity,
        Changes: [],
        Values:
          kind === 'y_'
            ? { id: primaryKey, x_name: 'Drill 18V' }
            : { [crmTableOf(family.entity)!.key]: primaryKey, contact_id: 1234 },
      };
    default:
      return { ...entity, Changes: ACTION_CHANGES[verb] ?? ['updated'] };
  }
}
