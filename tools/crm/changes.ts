import { z } from 'zod';
import { encodeTyped, plainTag, typedTagOf } from '../../lib/crm/typed-values.js';
import { effectOfVerb } from '../../lib/events/index.js';
import { buildSampleBody } from '../samples.js';
import { CrmError } from './errors.js';
import { crmTime, type FieldValue, isSilentField, type Row, type Table, tableOf } from './tables.js';

/** What a person (or the stream) does to a row. */
export type Change =
  | { op: 'create'; table: string; id?: number; fields?: Row }
  | { op: 'change'; table: string; id: number; fields: Row }
  | { op: 'softdelete'; table: string; id: number }
  | { op: 'delete'; table: string; id: number }
  | { op: 'action'; table: string; id: number; action: string };

/** The event a change raises: its name, its row, and the body fields beyond the envelope. */
export interface RaisedEvent {
  name: string;
  primaryKey: number;
  /** Changes, and FieldValues or Values where the event carries them. */
  parts: Record<string, unknown>;
}

export interface Applied {
  table: string;
  id: number;
  /** The row after the change; undefined once deleted. */
  row: Row | undefined;
  /** Undefined for a change of fields of other tables only, or of nothing. */
  event?: RaisedEvent;
}

/** The rows of one table, by primary key. */
export type TableRows = Record<string, Row>;

/** The values an action sets, beyond advancing `updated` (the fields its published Changes name). */
const ACTION_VALUES: Record<string, Row> = {
  sold: { status: 2, done: 1 },
  lost: { status: 3, done: 1, reason_id: 1 },
  completed: { completed: 1 },
  consented: { legalBase: 1, consentSource: 1 },
  unconsented: { legalBase: 0, consentSource: 1 },
  edited: { checkedOut: 0 },
};

/**
 * Applies `change` to `rows` (the table's rows, changed in place) at `now` by `associateId`, and says
 * which event it raises, shaped like the CRM's: created with the full Changes and FieldValues, changed
 * with the fields that changed, softdeleted, deleted with Values, actions with their published
 * Changes. `updated`, `updatedCount` and `updated_associate_id` move on every change of the row's own
 * table; a change of fields of other tables only (phone, e-mail, user-defined) raises nothing.
 */
export function applyChange(
  rows: TableRows,
  change: Change,
  context: { now: Date; associateId: number; nextId: () => number },
): Applied {
  const table = tableOf(change.table);
  const time = crmTime(context.now);
  const stamp = (row: Row) => {
    row.updated = time;
    row.updatedCount = Number(row.updatedCount ?? 0) + 1;
    row.updated_associate_id = context.associateId;
  };
  if (change.op === 'create') {
    const id = change.id ?? context.nextId();
    if (rows[id] !== undefined) throw new CrmError(`${table.name} ${id} exists already`, 409);
    checkFields(table, change.fields ?? {});
    const row = {
      ...table.defaults(id, time),
      registered_associate_id: context.associateId,
      ...change.fields,
    };
    rows[id] = row;
    return { table: table.name, id, row, event: raise(table, 'created', id, row) };
  }
  const row = rows[change.id];
  if (row === undefined) throw new CrmError(`no ${table.name} ${change.id}`, 404);
  switch (change.op) {
    case 'change': {
      checkFields(table, change.fields);
      const changed = Object.keys(change.fields).filter((field) => row[field] !== change.fields[field]);
      Object.assign(row, change.fields);
      const own = changed.filter((field) => table.own.has(field));
      if (own.length === 0) return { table: table.name, id: change.id, row };
      stamp(row);
      const changes = unique([table.key, ...own, 'updated_associate_id', 'updated', 'updatedCount']);
      return {
        table: table.name,
        id: change.id,
        row,
        event: raise(table, 'changed', change.id, row, changes),
      };
    }
    case 'softdelete': {
      verb(table, 'softdeleted');
      const list = table.name === 'category';
      if (list) row.Deleted = 1;
      else Object.assign(row, { deleted: 1, DeletedDate: time });
      stamp(row);
      const changes = [...(list ? ['Deleted'] : ['deleted', 'DeletedDate']), 'updated', 'updatedCount'];
      return {
        table: table.name,
        id: change.id,
        row,
        event: raise(table, 'softdeleted', change.id, row, changes),
      };
    }
    case 'delete': {
      verb(table, 'deleted');
      delete rows[change.id];
      return {
        table: table.name,
        id: change.id,
        row: undefined,
        event: raise(table, 'deleted', change.id, row),
      };
    }
    case 'action': {
      verb(table, change.action);
      if (effectOfVerb(change.action) !== 'action') throw new CrmError(`${change.action} is not an action`);
      Object.assign(row, ACTION_VALUES[change.action] ?? {});
      stamp(row);
      return { table: table.name, id: change.id, row, event: raise(table, change.action, change.id, row) };
    }
  }
}

/** The fields of a table's row as typed values: `status=2` a number where the field holds numbers. */
export function coerceFields(tableName: string, raw: Record<string, string>): Row {
  const defaults = tableOf(tableName).defaults(0, '');
  const fields: Row = {};
  for (const [field, text] of Object.entries(raw)) {
    const kind = typeof defaults[field];
    fields[field] =
      kind === 'number' && text.trim() !== '' && Number.isFinite(Number(text))
        ? Number(text)
        : kind === 'boolean'
          ? text === 'true' || text === '1'
          : text;
  }
  return fields;
}

function checkFields(table: Table, fields: Row): void {
  for (const [field, value] of Object.entries(fields)) {
    const known =
      table.own.has(field) || isSilentField(field) || (table.name.startsWith('y_') && field.startsWith('x_'));
    if (!known)
      throw new CrmError(
        `${table.name} has no field ${field}: use its own fields (${[...table.own].slice(0, 8).join(', ')}, ...) or phone, email, url, udef_*`,
      );
    if (!['string', 'number', 'boolean'].includes(typeof value))
      throw new CrmError(`${table.name}.${field} must be a string, a number or a boolean`);
  }
  if (table.key in fields)
    throw new CrmError(`${table.name}.${table.key} is the primary key: it cannot change`);
}

function verb(table: Table, name: string): void {
  if (!table.verbs.includes(name))
    throw new CrmError(`${table.name} has no ${name}: its events are ${table.verbs.join(', ')}`);
}

/** The event `<entity>.<verb>` for `row`, its body parts taken from the published samples' shape. */
function raise(table: Table, verbName: string, id: number, row: Row, changes?: string[]): RaisedEvent {
  const name = `${table.entity}.${verbName}`;
  const sample = buildSampleBody(name, { primaryKey: id });
  const parts: Record<string, unknown> = { Changes: changes ?? sample.Changes ?? [] };
  const typed = table.name.startsWith('y_');
  const valuesOf = (keys: Record<string, unknown>, encode: boolean) =>
    Object.fromEntries(
      Object.keys(keys).map((key) => {
        const value: FieldValue = row[key] ?? 0;
        return [key, encode ? typedAsSample(value, keys[key]) : value];
      }),
    );
  if (sample.FieldValues !== undefined) {
    parts.FieldValues = valuesOf(sample.FieldValues as Record<string, unknown>, typed);
    if (typed && verbName === 'created') parts.Changes = Object.keys(sample.FieldValues as object);
  }
  if (sample.Values !== undefined) parts.Values = valuesOf(sample.Values as Record<string, unknown>, false);
  return { name, primaryKey: id, parts };
}

/** A custom table's field in the form its sample shows (the column's type); a value it cannot hold by its own type. */
function typedAsSample(value: FieldValue, sample: unknown): string {
  const own = plainTag(value);
  return encodeTyped(value, typedTagOf(sample) ?? own) ?? encodeTyped(value, own)!;
}

function unique(items: string[]): string[] {
  return [...new Set(items)];
}

const Fields = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));
const Id = z.number().int().positive();
const ChangeSchema = z.discriminatedUnion('op', [
  z.object({ op: z.literal('create'), table: z.string(), id: Id.optional(), fields: Fields.optional() }),
  z.object({ op: z.literal('change'), table: z.string(), id: Id, fields: Fields }),
  z.object({ op: z.literal('softdelete'), table: z.string(), id: Id }),
  z.object({ op: z.literal('delete'), table: z.string(), id: Id }),
  z.object({ op: z.literal('action'), table: z.string(), id: Id, action: z.string() }),
]);

/** A change from JSON, or a one-line 400 saying what is accepted. */
export function parseChange(body: unknown): Change {
  const parsed = ChangeSchema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new CrmError(
    `the change is not accepted at ${issue?.path.join('.') || 'op'}: ${issue?.message}; use {"op": "create|change|softdelete|delete|action", "table", "id", "fields"|"action"}`,
  );
}
