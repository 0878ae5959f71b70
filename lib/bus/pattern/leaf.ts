import { BlockList, isIP } from 'node:net';
import * as z from 'zod';
import { PatternError } from './errors.js';
import { compileWildcard } from './wildcard.js';

/** What EventBridge compares: JSON scalars. Objects are not leaves; arrays are flattened. */
export type Leaf = string | number | boolean | null;

/** One element of a field's value array, compiled: does it accept the leaves found at the field? */
export type LeafTest = (leaves: readonly Leaf[]) => boolean;

type Operator = (operand: unknown, path: string) => LeafTest;
type Comparison = '=' | '<' | '<=' | '>' | '>=';

function isLeaf(value: unknown): value is Leaf {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

/** The leaves at a field: none when absent or an object, the flattened scalars of an array. */
export function leavesOf(value: unknown): Leaf[] {
  return flattened(value).filter(isLeaf);
}

/**
 * A value with every array in it flattened, in order: the value itself when it is not an array.
 * Without recursion, so that an event nested thousands of arrays deep is matched like any other.
 */
export function flattened(value: unknown): unknown[] {
  if (!Array.isArray(value)) return [value];
  const items: unknown[] = [];
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (!Array.isArray(item)) items.push(item);
    else for (let i = item.length - 1; i >= 0; i--) stack.push(item[i]);
  }
  return items;
}

/** Compiles one element of a field's value array: a literal or an object with one operator. */
export function compileLeaf(element: unknown, path: string): LeafTest {
  if (isLeaf(element)) {
    if (typeof element === 'number' && !Number.isFinite(element)) {
      throw new PatternError(path, 'numbers must be finite');
    }
    return some((value) => value === element);
  }
  const entries = typeof element === 'object' && !Array.isArray(element) ? Object.entries(element) : [];
  const [entry, extra] = entries;
  if (entry === undefined || extra !== undefined) {
    throw new PatternError(
      path,
      `expected a string, number, boolean, null or an object with exactly one of: ${OPERATOR_NAMES}`,
    );
  }
  const [name, operand] = entry;
  const operator = OPERATORS.get(name);
  if (operator === undefined) {
    throw new PatternError(path, `unknown operator "${name}"; accepted: ${OPERATOR_NAMES}`);
  }
  return operator(operand, `${path}.${name}`);
}

const some =
  (test: (value: Leaf) => boolean): LeafTest =>
  (leaves) =>
    leaves.some(test);

const isString = (value: Leaf): value is string => typeof value === 'string';

function operand<T>(schema: z.ZodType<T>, value: unknown, path: string, accepted: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new PatternError(path, `expected ${accepted}`);
  return parsed.data;
}

const Strings = z.union([z.string(), z.array(z.string()).min(1)]);
const NonEmptyStrings = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);
const AffixSchema = z.union([z.string(), z.strictObject({ 'equals-ignore-case': z.string() })]);
const AnythingButSchema = z.union([
  z.string(),
  z.number(),
  z.array(z.string()).min(1),
  z.array(z.number()).min(1),
  z.strictObject({ prefix: NonEmptyStrings }),
  z.strictObject({ suffix: NonEmptyStrings }),
  z.strictObject({ 'equals-ignore-case': Strings }),
  z.strictObject({ wildcard: Strings }),
]);
const NumericSchema = z.union([
  z.tuple([z.enum(['=', '<', '<=', '>', '>=']), z.number()]),
  z.tuple([z.enum(['>', '>=']), z.number(), z.enum(['<', '<=']), z.number()]),
]);

const list = (value: string | string[]): string[] => (Array.isArray(value) ? value : [value]);

function affix(test: (value: string, part: string) => boolean): Operator {
  return (raw, path) => {
    const part = operand(AffixSchema, raw, path, 'a string or {"equals-ignore-case": string}');
    if (typeof part === 'string') return some((value) => isString(value) && test(value, part));
    const lower = part['equals-ignore-case'].toLowerCase();
    return some((value) => isString(value) && test(value.toLowerCase(), lower));
  };
}

const startsWith = (value: string, part: string) => value.startsWith(part);
const endsWith = (value: string, part: string) => value.endsWith(part);

/** The values `anything-but` excludes; everything else present at the field (null included) matches. */
function excluded(raw: unknown, path: string): (value: Leaf) => boolean {
  const but = operand(
    AnythingButSchema,
    raw,
    path,
    'a string, a number, a non-empty list of only strings or only numbers, or one of ' +
      '{"prefix": …}, {"suffix": …}, {"equals-ignore-case": …}, {"wildcard": …} with a string or a list of strings',
  );
  if (typeof but === 'string' || typeof but === 'number') return (value) => value === but;
  if (Array.isArray(but)) {
    const values = new Set<Leaf>(but);
    return (value) => values.has(value);
  }
  if ('prefix' in but) {
    const parts = list(but.prefix);
    return (value) => isString(value) && parts.some((part) => value.startsWith(part));
  }
  if ('suffix' in but) {
    const parts = list(but.suffix);
    return (value) => isString(value) && parts.some((part) => value.endsWith(part));
  }
  if ('wildcard' in but) {
    const matchers = list(but.wildcard).map((pattern) => compileWildcard(pattern, `${path}.wildcard`));
    return (value) => isString(value) && matchers.some((matches) => matches(value));
  }
  const lowered = new Set(list(but['equals-ignore-case']).map((part) => part.toLowerCase()));
  return (value) => isString(value) && lowered.has(value.toLowerCase());
}

function compare(value: number, comparison: Comparison, bound: number): boolean {
  switch (comparison) {
    case '=':
      return value === bound;
    case '<':
      return value < bound;
    case '<=':
      return value <= bound;
    case '>':
      return value > bound;
    case '>=':
      return value >= bound;
  }
}

function numeric(raw: unknown, path: string): LeafTest {
  const terms = operand(
    NumericSchema,
    raw,
    path,
    '[op, number] with op one of =, <, <=, >, >=, or [">" or ">=", low, "<" or "<=", high]',
  );
  const bounds: [Comparison, number][] = [[terms[0], terms[1]]];
  if (terms.length === 4) {
    if (terms[3] <= terms[1]) throw new PatternError(path, 'the lower bound must be below the upper bound');
    bounds.push([terms[2], terms[3]]);
  }
  return some(
    (value) =>
      typeof value === 'number' && bounds.every(([comparison, bound]) => compare(value, comparison, bound)),
  );
}

function cidr(raw: unknown, path: string): LeafTest {
  const block = operand(z.string(), raw, path, 'a CIDR block such as "10.0.0.0/24" or "2001:db8::/32"');
  const [address = '', bits = '', extra] = block.split('/');
  const family = isIP(address);
  if (
    family === 0 ||
    extra !== undefined ||
    !/^\d{1,3}$/.test(bits) ||
    Number(bits) > (family === 4 ? 32 : 128)
  ) {
    throw new PatternError(path, `"${block}" is not a CIDR block such as "10.0.0.0/24" or "2001:db8::/32"`);
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  const subnet = new BlockList();
  subnet.addSubnet(address, Number(bits), type);
  return some((value) => isString(value) && isIP(value) === family && subnet.check(value, type));
}

const OPERATORS = new Map<string, Operator>([
  [
    'anything-but',
    (raw, path) => {
      const isExcluded = excluded(raw, path);
      return some((value) => !isExcluded(value));
    },
  ],
  ['cidr', cidr],
  [
    'equals-ignore-case',
    (raw, path) => {
      const lower = operand(z.string(), raw, path, 'a string').toLowerCase();
      return some((value) => isString(value) && value.toLowerCase() === lower);
    },
  ],
  [
    'exists',
    (raw, path) => {
      const wanted = operand(z.boolean(), raw, path, 'true or false');
      return (leaves) => leaves.length > 0 === wanted;
    },
  ],
  ['numeric', numeric],
  ['prefix', affix(startsWith)],
  ['suffix', affix(endsWith)],
  [
    'wildcard',
    (raw, path) => {
      const matches = compileWildcard(operand(z.string(), raw, path, 'a string'), path);
      return some((value) => isString(value) && matches(value));
    },
  ],
]);

const OPERATOR_NAMES = [...OPERATORS.keys()].join(', ');
