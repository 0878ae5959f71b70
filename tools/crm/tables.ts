import { CRM_TABLES, crmTableOf } from '../../lib/crm/tables.js';
import { decodeTyped } from '../../lib/crm/typed-values.js';
import { buildSampleBody, dotNetTimestamp } from '../samples.js';
import { verbsOf } from '../stream.js';
import { CrmError } from './errors.js';

/** A value of a row's field, as the CRM's database holds it. */
export type FieldValue = string | number | boolean;
export type Row = Record<string, FieldValue>;

/** One table of the simulated CRM: its primary key, the Entity of its webhook events, its REST name. */
export interface Table {
  name: string;
  key: string;
  /** Event names are `<entity>.<verb>`: an appointment's are `activity.*`, the list's `list.category.*`. */
  entity: string;
  /** The REST entity (`GET /api/v1/Contact/{id}`); lists and custom tables have none here. */
  rest?: string;
  verbs: readonly string[];
  /** The table's own fields: a change of one raises an event. */
  own: ReadonlySet<string>;
  /** The row a create starts from (before the given fields), for a primary key and a time. */
  defaults: (id: number, now: string) => Row;
}

/** The minimum date the CRM writes for "never". */
export const NEVER = '0001-01-01T00:00:00';

/** A CRM timestamp, as the database fields carry it: UTC, 7 fractional digits, no offset. */
export function crmTime(date: Date = new Date()): string {
  return dotNetTimestamp(date).slice(0, -1);
}

/**
 * Fields that live in other tables (phone numbers, e-mail addresses, web addresses, user-defined
 * fields): a change of one changes the row silently, as the CRM raises events only for an entity's
 * own table (crm-rest-api.md).
 */
export function isSilentField(field: string): boolean {
  return ['phone', 'email', 'url'].includes(field) || field.startsWith('udef_');
}

const STRING_FIELDS = new Set([
  'name',
  'department',
  'kananame',
  'number1',
  'number2',
  'orgNr',
  'soundEx',
  'dbi_key',
  'heading',
  'firstname',
  'lastname',
  'title',
  'location',
  'rejectReason',
  'Name',
  'Tooltip',
  'description',
]);
const DATE_FIELDS = new Set([
  'registered',
  'updated',
  'DeletedDate',
  'dbi_last_modified',
  'dbi_last_syncronized',
  'activeDate',
  'do_by',
  'endDate',
  'saledate',
  'alarm',
]);

/** Fields a table has beyond its created event's Changes, so that the usual edits raise events. */
const EXTRA_FIELDS: Record<string, string[]> = {
  person: ['firstname', 'lastname', 'title', 'department', 'legalBase', 'consentSource'],
  sale: ['heading', 'done', 'reason_id', 'completed'],
  project: ['name', 'description'],
  document: ['name', 'description', 'checkedOut'],
  quote: ['approvalStatus', 'sentDate', 'orderedDate'],
  category: [],
  y_equipment: [],
};

/** Every table receiving per-row lifecycle fields (`updated`, `updatedCount`, ...). */
const LIFECYCLE_FIELDS = [
  'registered',
  'registered_associate_id',
  'updated',
  'updated_associate_id',
  'updatedCount',
];

/**
 * The receiver's table of the CRM's entities (lib/crm/tables.ts), and a list and a custom table by
 * example, named as their published samples write them.
 */
const TABLE_SHAPES: Array<Pick<Table, 'name' | 'key' | 'entity' | 'rest'>> = [
  ...Object.keys(CRM_TABLES),
  'list.category',
  'y_equipment',
].map((entity) => {
  const { table, key, rest } = crmTableOf(entity)!;
  return { name: table, key, entity, ...(rest !== undefined && { rest }) };
});

/** The tables of the simulated CRM, by name. */
export const TABLES: ReadonlyMap<string, Table> = new Map(
  TABLE_SHAPES.map((shape) => {
    const created = buildSampleBody(`${shape.entity}.created`, { primaryKey: 1 });
    const sampleValues = decodeSample((created.FieldValues ?? {}) as Record<string, unknown>);
    const own = new Set([
      shape.key,
      ...(created.Changes as string[]),
      ...Object.keys(sampleValues),
      ...(EXTRA_FIELDS[shape.name] ?? []),
      ...LIFECYCLE_FIELDS,
    ]);
    const defaults = (id: number, now: string): Row => {
      const row: Row = {};
      for (const field of own) row[field] = defaultOf(field);
      Object.assign(row, sampleValues, { [shape.key]: id, registered: now, updated: NEVER, updatedCount: 0 });
      return row;
    };
    return [shape.name, { ...shape, verbs: verbsOf(shape.entity), own, defaults }];
  }),
);

/** The table named `name`, or a one-line error naming the tables there are. */
export function tableOf(name: string): Table {
  const table = TABLES.get(name);
  if (table === undefined)
    throw new CrmError(`no table ${JSON.stringify(name)}: use one of ${[...TABLES.keys()].join(', ')}`);
  return table;
}

function defaultOf(field: string): FieldValue {
  if (DATE_FIELDS.has(field)) return NEVER;
  return STRING_FIELDS.has(field) ? '' : 0;
}

/** A custom table's typed strings (`[I:6]`, `[DT:09/16/2025 10:11:12]`) as plain values; others as they are. */
function decodeSample(values: Record<string, unknown>): Row {
  return Object.fromEntries(
    Object.entries(values).map(([field, value]) => [field, decodeTyped(value as FieldValue)]),
  );
}
