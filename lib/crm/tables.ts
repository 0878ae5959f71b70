/** Where an entity's rows live in the CRM: its table and primary key (the FieldValues' names), its REST entity. */
export interface CrmTable {
  table: string;
  key: string;
  /** `GET /api/v1/<rest>/{id}`; lists and custom tables have none. */
  rest?: string;
}

/**
 * The entities of the webhook events whose rows can be fetched back (crm-rest-api.md): an
 * appointment's events are `activity.*`. Lists (`list.<name>`) and custom tables (`y_<name>`) are
 * read from the archive by their table name.
 */
export const CRM_TABLES: Readonly<Record<string, CrmTable>> = {
  contact: { table: 'contact', key: 'contact_id', rest: 'Contact' },
  person: { table: 'person', key: 'person_id', rest: 'Person' },
  sale: { table: 'sale', key: 'sale_id', rest: 'Sale' },
  project: { table: 'project', key: 'project_id', rest: 'Project' },
  activity: { table: 'appointment', key: 'appointment_id', rest: 'Appointment' },
  document: { table: 'document', key: 'document_id', rest: 'Document' },
};
