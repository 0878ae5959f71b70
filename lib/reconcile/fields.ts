/**
 * The FieldValues of each entity's webhook events, by database name, as the CRM writes them (its
 * published samples, tools/samples.ts; test/reconcile/fields.test.ts holds the two equal): a snapshot
 * selects exactly these from the archive, so it compares with the row field by field and a row the
 * CRM did not change stays equal (nothing recorded, nothing published).
 */
export const SNAPSHOT_FIELDS: Readonly<Record<string, readonly string[]>> = {
  contact: [
    'activeInterests',
    'associate_id',
    'business_idx',
    'category_idx',
    'country_id',
    'deleted',
    'DeletedDate',
    'registered',
    'registered_associate_id',
    'source',
    'updated',
    'userdef2_id',
    'userdef_id',
  ],
  person: ['person_id', 'contact_id', 'associate_id', 'registered', 'updated', 'deleted', 'DeletedDate'],
  sale: ['sale_id', 'contact_id', 'person_id', 'associate_id', 'amount', 'status', 'saledate'],
  project: ['project_id', 'associate_id', 'status', 'done', 'endDate'],
  activity: [
    'activeDate',
    'associate_id',
    'contact_id',
    'do_by',
    'document_id',
    'endDate',
    'modified_appointment_fields',
    'mother_id',
    'person_id',
    'private',
    'project_id',
    'sale_id',
    'status',
    'task_idx',
    'type',
    'updated',
    'userdef2_id',
    'userdef_id',
  ],
  document: ['document_id', 'contact_id', 'person_id', 'project_id', 'sale_id', 'doctmpl_id'],
};

/** A snapshot's FieldValues text from an archive row: the entity's {@link SNAPSHOT_FIELDS}, in order. */
export function snapshotFieldValues(entity: string, values: Readonly<Record<string, unknown>>): string {
  const fields = SNAPSHOT_FIELDS[entity] ?? [];
  return JSON.stringify(Object.fromEntries(fields.map((field) => [field, values[field] ?? null])));
}
