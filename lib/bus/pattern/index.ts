import { PatternError } from './errors.js';
import { compileLeaf, flattened, type LeafTest, leavesOf } from './leaf.js';
import { InexactNumber } from './number.js';

export { PatternError } from './errors.js';
export { InexactNumber, isExactDouble } from './number.js';

/** Whether an event (the JSON EventBridge would send) matches a compiled pattern. */
export type EventMatcher = (event: unknown) => boolean;

/** EventBridge's limit on an event pattern, counted here on its compact JSON. */
export const MAX_PATTERN_LENGTH = 4096;
/** How many objects deep a pattern may nest (the local matcher's limit). */
export const MAX_PATTERN_DEPTH = 16;

type JsonObject = Record<string, unknown>;
/** A compiled object pattern, given the event's object at that place (undefined when there is none). */
type ObjectTest = (node: JsonObject | undefined) => boolean;

/**
 * Compiles an EventBridge event pattern into a matcher that runs locally, with EventBridge's rules:
 * fields are ANDed, a field's array of values is ORed, an array in the event matches when any of its
 * elements does (objects in one array element are matched together), `$or` lists alternatives, and
 * the operators prefix, suffix, equals-ignore-case, wildcard, anything-but, numeric, exists and cidr.
 * A pattern it cannot evaluate, or one EventBridge refuses (such as a number no double holds exactly,
 * an {@link InexactNumber}), throws a {@link PatternError} naming the place, never a silent no-match.
 * Events are walked without recursion: any depth of nesting matches as EventBridge would.
 *
 * @example
 * const matches = compilePattern({ 'detail-type': ['contact.changed'], detail: { significantChanges: ['department'] } });
 * matches({ 'detail-type': 'contact.changed', detail: { significantChanges: ['department', 'name'] } }); // true
 */
export function compilePattern(pattern: unknown): EventMatcher {
  if (!isObject(pattern)) throw new PatternError('', 'expected a JSON object');
  const length = JSON.stringify(pattern).length;
  if (length > MAX_PATTERN_LENGTH) {
    throw new PatternError('', `${length} characters of JSON, more than EventBridge's ${MAX_PATTERN_LENGTH}`);
  }
  refuseInexactNumbers(pattern);
  const test = compileObject(pattern, '', 1);
  return (event) => test(isObject(event) ? event : undefined);
}

function compileObject(pattern: unknown, path: string, depth: number): ObjectTest {
  if (!isObject(pattern)) throw new PatternError(path, 'expected an object of fields');
  if (depth > MAX_PATTERN_DEPTH)
    throw new PatternError(path, `nested more than ${MAX_PATTERN_DEPTH} objects deep`);
  const entries = Object.entries(pattern);
  if (entries.length === 0)
    throw new PatternError(path, 'an empty object matches nothing; name at least one field');
  const tests = entries.map(([key, value]): ObjectTest => {
    const at = path ? `${path}.${key}` : key;
    if (key === '$or') return compileOr(value, at, depth);
    if (Array.isArray(value)) {
      const leafTests = compileValues(value, at);
      return (node) => {
        const leaves = leavesOf(field(node, key));
        return leafTests.some((test) => test(leaves));
      };
    }
    if (isObject(value)) {
      const nested = compileObject(value, at, depth + 1);
      return (node) => {
        const objects = objectsOf(field(node, key));
        return objects.length === 0 ? nested(undefined) : objects.some(nested);
      };
    }
    throw new PatternError(at, 'expected an array of values or a nested object');
  });
  return (node) => tests.every((test) => test(node));
}

function compileOr(value: unknown, path: string, depth: number): ObjectTest {
  if (!Array.isArray(value) || value.length < 2) {
    throw new PatternError(path, 'expected an array of at least two object patterns');
  }
  const alternatives = value.map((alternative, i) => compileObject(alternative, `${path}[${i}]`, depth));
  return (node) => alternatives.some((test) => test(node));
}

function compileValues(values: unknown[], path: string): LeafTest[] {
  if (values.length === 0)
    throw new PatternError(path, 'an empty array matches nothing; list at least one value');
  return values.map((element, i) => compileLeaf(element, `${path}[${i}]`));
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function field(node: JsonObject | undefined, key: string): unknown {
  return node !== undefined && Object.hasOwn(node, key) ? node[key] : undefined;
}

/** The objects at a field: the object itself, or those found in an array (flattened). */
function objectsOf(value: unknown): JsonObject[] {
  return flattened(value).filter(isObject);
}

/** Refuses the first number of the pattern that no double holds exactly, as EventBridge does. */
function refuseInexactNumbers(pattern: JsonObject): void {
  const stack: [unknown, string][] = [[pattern, '']];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (value instanceof InexactNumber) {
      throw new PatternError(
        path,
        `${value.text} is not exactly a double (it reads as ${Number(value.text)}): EventBridge refuses such a number`,
      );
    }
    const members = Array.isArray(value)
      ? value.map((item, i): [unknown, string] => [item, `${path}[${i}]`])
      : isObject(value)
        ? Object.entries(value).map(([key, item]): [unknown, string] => [item, path ? `${path}.${key}` : key])
        : [];
    stack.push(...members.reverse());
  }
}
