import { objectMemberTexts } from '../json-text.js';

/**
 * JSON text carried as is, so numbers keep the digits the sender wrote (a .NET long above 2^53 does
 * not survive `JSON.parse`). Node 20 has no `JSON.rawJSON`, hence this small wrapper.
 */
export interface RawJson {
  readonly rawJson: string;
}

/** Wraps JSON text that {@link stringify} writes verbatim. The text must be valid JSON. */
export function rawJson(text: string): RawJson {
  return { rawJson: text };
}

function isRaw(value: unknown): value is RawJson {
  return typeof value === 'object' && value !== null && typeof (value as RawJson).rawJson === 'string';
}

/**
 * `JSON.stringify` that writes {@link RawJson} values verbatim, at any depth. Undefined properties
 * are left out, as JSON.stringify does.
 *
 * @example stringify({ a: rawJson('9007199254740993'), b: [1] }) === '{"a":9007199254740993,"b":[1]}'
 */
export function stringify(value: unknown): string {
  if (isRaw(value)) return value.rawJson;
  if (Array.isArray(value)) return `[${value.map((item) => stringify(item ?? null)).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const members = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .map(([key, item]) => `${JSON.stringify(key)}:${stringify(item)}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The top-level members of a JSON object text, each value as its exact text. A key that appears
 * twice keeps its last value, as `JSON.parse` does. Throws a SyntaxError when `text` is not a JSON
 * object.
 *
 * @example objectMembers('{"A": 12345678901234567890, "B": [1]}') // Map { 'A' => '12345678901234567890', 'B' => '[1]' }
 */
export function objectMembers(text: string): Map<string, string> {
  JSON.parse(text); // validates: the scan relies on well-formed JSON
  const members = objectMemberTexts(text);
  if (members === undefined) throw new SyntaxError('expected a JSON object');
  return members;
}
