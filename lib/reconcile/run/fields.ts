import { CRM_TABLES } from '../../crm/tables.js';
import {
  encodeTyped,
  numeralValue,
  type PlainValue,
  type TypedTag,
  typedTagOf,
} from '../../crm/typed-values.js';
import { type FetchedRow, SnapshotError } from './snapshot-message.js';

/** The FieldValues a snapshot of an entity writes: these fields in this order, each in its form. */
export interface SnapshotShape {
  fields: readonly string[];
  /** A custom table's fields, typed as a stored row of it writes them (`[I:6]`): the tag of each. */
  tags: Readonly<Record<string, TypedTag>>;
  /**
   * FieldValues of the entity's stored rows (`sampleFieldValues`): the form (number or text) each
   * field is written in where the row itself is not stored yet.
   */
  sample?: Readonly<Record<string, unknown>> | undefined;
}

/**
 * The shape of a fixed entity's snapshots (its table's `fields`, lib/crm/tables.ts), undefined for any
 * other entity.
 */
export function fixedShape(
  entity: string,
  sample?: Readonly<Record<string, unknown>>,
): SnapshotShape | undefined {
  const fields = Object.hasOwn(CRM_TABLES, entity) ? CRM_TABLES[entity]!.fields : undefined;
  return fields === undefined ? undefined : { fields, tags: {}, sample };
}

/**
 * The shape of a list's or custom table's snapshots, learnt from the FieldValues of a row of it the
 * receiver stores (their fields are the tenant's own): its fields, in order, and each typed value's
 * tag, so a snapshot writes a value in the form the stored rows hold it.
 *
 * @example learnedShape({ id: '[I:3]', x_price: '[F:129.9]' }) // { fields: ['id', 'x_price'], tags: { id: 'I', x_price: 'F' } }
 */
export function learnedShape(stored: Readonly<Record<string, unknown>>): SnapshotShape {
  const tags: Record<string, TypedTag> = {};
  for (const [field, value] of Object.entries(stored)) {
    const tag = typedTagOf(value);
    if (tag !== undefined) tags[field] = tag;
  }
  return { fields: Object.keys(stored), tags, sample: stored };
}

/**
 * A snapshot's FieldValues text from an archive row: the shape's fields in order (a missing one
 * null), a typed field written with its tag, any other in the form the live events wrote it: that of
 * the stored row (`stored`, its FieldValues), else of the entity's stored rows (the shape's sample).
 * So a number the archive answers as text (`"5"`) compares equal to the stored `5` and is stored as a
 * number. Throws {@link SnapshotError} (the row is skipped, one line) for a value its tag cannot hold.
 */
export function snapshotFieldValues(
  shape: SnapshotShape,
  values: Readonly<Record<string, unknown>>,
  row: Pick<FetchedRow, 'context' | 'entity' | 'primaryKey'>,
  stored?: Readonly<Record<string, unknown>>,
): string {
  const written = shape.fields.map((field) => {
    const value = values[field] ?? null;
    const tag = shape.tags[field];
    if (tag === undefined || value === null)
      return [field, inStoredForm(value, stored?.[field] ?? shape.sample?.[field])];
    const typed = encodeTyped(value as PlainValue, tag);
    if (typed === undefined)
      throw new SnapshotError(row, `${field}: ${quoted(value)} cannot be written as [${tag}:...]`);
    return [field, typed];
  });
  return JSON.stringify(Object.fromEntries(written));
}

/**
 * `value` in the form of `reference` (the field's stored value): a numeral written as text where the
 * rows hold a number, as the number (a whole number past 2^53 stays text: a number cannot keep its
 * digits); anything else as the archive wrote it (a number is the CRM's own, whatever a row held).
 */
function inStoredForm(value: unknown, reference: unknown): unknown {
  if (typeof reference !== 'number' || typeof value !== 'string') return value;
  const number = numeralValue(value);
  return number === undefined || (Number.isInteger(number) && !Number.isSafeInteger(number)) ? value : number;
}

/** Characters of a refused value a snapshot's line quotes: its start, enough to find it in the CRM. */
const QUOTED_CHARS = 40;

/** A value as JSON, cut to its start when long (a custom field may hold hundreds of KB: the line stays one short line). */
function quoted(value: unknown): string {
  const text = JSON.stringify(value);
  return text.length <= QUOTED_CHARS ? text : `${text.slice(0, QUOTED_CHARS)}… (${text.length} characters)`;
}
