import { CrmError } from './errors.js';
import type { CrmAnswer } from './http.js';
import type { FieldValue, Row } from './tables.js';

/** A row the archive can list: its table, primary key and fields. */
export interface ArchiveRow {
  table: string;
  id: number;
  fields: Row | Record<string, string | number>;
}

type Condition = { field: string; op: string; value: string };
type Filter = Condition | { and: Filter[] } | { or: Filter[] };

/** The operators a window needs; anything else is answered 501 rather than guessed. */
const OPERATORS: Record<string, (left: FieldValue | undefined, right: string) => boolean> = {
  eq: (left, right) => String(left) === right,
  ne: (left, right) => String(left) !== right,
  lt: (left, right) => compare(left, right) < 0,
  le: (left, right) => compare(left, right) <= 0,
  gt: (left, right) => compare(left, right) > 0,
  ge: (left, right) => compare(left, right) >= 0,
  afterTime: (left, right) => time(left) > time(right),
  beforeTime: (left, right) => time(left) < time(right),
  after: (left, right) => day(left) > day(right),
  before: (left, right) => day(left) < day(right),
  date: (left, right) => day(left) === day(right),
};

/** A time without an offset is the CRM's UTC; one with an offset is taken as written. */
function time(value: FieldValue | undefined): number {
  const text = String(value);
  return Date.parse(/[Zz]|[+-]\d\d:\d\d$/.test(text) ? text : `${text}Z`);
}
function day(value: FieldValue | undefined): string {
  return String(value).slice(0, 10);
}
function compare(left: FieldValue | undefined, right: string): number {
  const number = Number(right);
  if (typeof left === 'number' && Number.isFinite(number)) return left - number;
  return String(left).localeCompare(right);
}

const TOKEN = /\s*(\(|\)|'(?:[^']|'')*'|[^\s()]+)/y;

/** Parses `$filter`: `table.field op value` joined by `and`/`or` (and binds first), with parentheses. */
export function parseFilter(text: string): Filter {
  const tokens: string[] = [];
  let read = 0;
  TOKEN.lastIndex = 0;
  for (let match = TOKEN.exec(text); match !== null; match = TOKEN.exec(text)) {
    tokens.push(match[1]!);
    read = TOKEN.lastIndex;
  }
  if (text.slice(read).trim() !== '') throw new CrmError(`$filter cannot be read at "${text.slice(read)}"`);
  let at = 0;
  const expression = (): Filter => {
    const ors = [conjunction()];
    while (tokens[at]?.toLowerCase() === 'or') {
      at++;
      ors.push(conjunction());
    }
    return ors.length === 1 ? ors[0]! : { or: ors };
  };
  const conjunction = (): Filter => {
    const ands = [term()];
    while (tokens[at]?.toLowerCase() === 'and') {
      at++;
      ands.push(term());
    }
    return ands.length === 1 ? ands[0]! : { and: ands };
  };
  const term = (): Filter => {
    if (tokens[at] === '(') {
      at++;
      const inner = expression();
      if (tokens[at++] !== ')') throw new CrmError('$filter has an unclosed parenthesis');
      return inner;
    }
    const [field, op, raw] = [tokens[at], tokens[at + 1], tokens[at + 2]];
    if (field === undefined || op === undefined || raw === undefined)
      throw new CrmError('$filter must be table.field <operator> value, joined by and/or');
    at += 3;
    const value = raw.startsWith("'") ? raw.slice(1, -1).replaceAll("''", "'") : raw;
    return { field, op, value };
  };
  const filter = expression();
  if (at !== tokens.length)
    throw new CrmError(`$filter has "${tokens[at]}" where and/or or the end was expected`);
  return filter;
}

function fieldsOf(filter: Filter): Condition[] {
  if ('and' in filter) return filter.and.flatMap(fieldsOf);
  if ('or' in filter) return filter.or.flatMap(fieldsOf);
  return [filter];
}

function matches(filter: Filter, row: ArchiveRow['fields'], column: (field: string) => string): boolean {
  if ('and' in filter) return filter.and.every((part) => matches(part, row, column));
  if ('or' in filter) return filter.or.some((part) => matches(part, row, column));
  return OPERATORS[filter.op]!(row[column(filter.field)], filter.value);
}

/**
 * `GET /api/v1/archive/dynamic` over one table's rows: `$select` of `table.field`, `$filter`,
 * `$orderBy`, `$top` (the page size, 100 unless given) and `$skip`, and `odata.nextLink` while rows
 * remain. Answers `{"odata.nextLink"?, value: [{PrimaryKey, EntityName, "table.field": ...}]}`.
 * Several tables in one query (joins) and other operators answer 501.
 */
export function dynamicArchive(
  query: URLSearchParams,
  rowsOf: (table: string) => ArchiveRow[] | undefined,
  selfUrl: string,
): CrmAnswer {
  const select = (query.get('$select') ?? '')
    .split(',')
    .map((field) => field.trim())
    .filter(Boolean);
  if (select.length === 0) throw new CrmError('$select must name at least one table.field');
  const filter = query.get('$filter') ? parseFilter(query.get('$filter')!) : undefined;
  const order = (query.get('$orderBy') ?? query.get('$orderby') ?? '')
    .split(',')
    .map((part) => part.trim().split(/\s+/))
    .filter((part) => part[0]);
  const fields = [
    ...select,
    ...(filter ? fieldsOf(filter).map((c) => c.field) : []),
    ...order.map((part) => part[0]!),
  ];
  const tables = new Set(fields.map((field) => field.split('.')[0]!));
  if (tables.size > 1)
    return {
      status: 501,
      body: {
        Error: `the dynamic provider of the simulator reads one table per query, not ${[...tables].join(', ')}`,
      },
    };
  const table = [...tables][0]!;
  const rows = rowsOf(table);
  if (rows === undefined) throw new CrmError(`no table ${table} in the dynamic provider`);
  const column = (field: string) => {
    const [prefix, name] = field.split('.', 2);
    if (prefix !== table || !name) throw new CrmError(`${field} is not table.field`);
    return name;
  };
  for (const field of fields) column(field);
  for (const condition of filter ? fieldsOf(filter) : [])
    if (!Object.hasOwn(OPERATORS, condition.op))
      return {
        status: 501,
        body: { Error: `the $filter operator ${condition.op} is not implemented by the simulator` },
      };
  const integer = (name: string, fallback: number) => {
    const raw = query.get(name);
    if (raw === null) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 0)
      throw new CrmError(`${name} must be a whole number, not ${raw}`);
    return value;
  };
  const top = integer('$top', 100);
  const skip = integer('$skip', 0);

  const found = rows.filter((row) => filter === undefined || matches(filter, row.fields, column));
  found.sort((a, b) => {
    for (const [field, direction] of order) {
      const name = column(field!);
      const sign = direction?.toLowerCase() === 'desc' ? -1 : 1;
      const difference = compare(a.fields[name], String(b.fields[name]));
      if (difference !== 0) return sign * difference;
    }
    return a.id - b.id;
  });
  const page = found.slice(skip, skip + top);
  const value = page.map((row) => ({
    PrimaryKey: String(row.id),
    EntityName: table,
    ...Object.fromEntries(select.map((field) => [field, row.fields[column(field)] ?? null])),
  }));
  const next = new URLSearchParams(query);
  next.set('$skip', String(skip + top));
  next.set('$top', String(top));
  return {
    status: 200,
    body: { ...(skip + top < found.length ? { 'odata.nextLink': `${selfUrl}?${next}` } : {}), value },
  };
}
