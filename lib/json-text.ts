import { randomUUID } from 'node:crypto';

/**
 * A piece of JSON kept as the exact text the sender wrote (a .NET long keeps its digits, 1e-200 stays
 * 1e-200, any depth survives). `JSON.stringify` sees its parsed value; {@link stringifyExact} splices
 * the text itself.
 */
export class JsonText {
  constructor(readonly text: string) {}

  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/**
 * `JSON.stringify(value, null, space)`, except that every {@link JsonText} inside is written as its
 * exact text (not re-indented) instead of a re-serialised parse.
 *
 * @example stringifyExact({ a: new JsonText('9223372036854775807') }) === '{"a":9223372036854775807}'
 */
export function stringifyExact(value: unknown, space?: number): string {
  const texts: string[] = [];
  const mark = `\u0000${randomUUID()}:`;
  const out = JSON.stringify(
    value,
    function (this: Record<string, unknown>, key: string, current: unknown) {
      const original = this[key];
      if (!(original instanceof JsonText)) return current;
      texts.push(original.text);
      return `${mark}${texts.length - 1}`;
    },
    space,
  );
  if (texts.length === 0) return out;
  const quotedMark = JSON.stringify(mark).slice(0, -1);
  return out.replace(
    new RegExp(`${escapeRegExp(quotedMark)}(\\d+)"`, 'g'),
    (_, i: string) => texts[Number(i)]!,
  );
}

/**
 * The top-level members of a JSON object text, each value as its exact text, found without parsing it
 * (so without recursion: any depth works). A key that appears twice keeps its last value, as in
 * `JSON.parse`. `text` must be valid JSON; undefined when it is not an object.
 *
 * @example objectMemberTexts('{"A": 12345678901234567890, "B": [1]}') // Map { 'A' => '12345678901234567890', 'B' => '[1]' }
 */
export function objectMemberTexts(text: string): Map<string, string> | undefined {
  let i = skipSpace(text, 0);
  if (text[i] !== '{') return undefined;
  const members = new Map<string, string>();
  i = skipSpace(text, i + 1);
  while (i < text.length && text[i] !== '}') {
    const keyEnd = endOfString(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    const start = skipSpace(text, skipSpace(text, keyEnd) + 1);
    const end = endOfValue(text, start);
    members.delete(key);
    members.set(key, text.slice(start, end));
    i = skipSpace(text, end);
    if (text[i] === ',') i = skipSpace(text, i + 1);
  }
  return members;
}

/**
 * The exact text of some members of a JSON object ({@link objectMemberTexts}, picked by name).
 *
 * @example jsonMembers('{"a":1,"b":{"c":2}}', ['b']) // { b: '{"c":2}' }
 */
export function jsonMembers<N extends string>(text: string, names: readonly N[]): Partial<Record<N, string>> {
  const found: Partial<Record<N, string>> = {};
  const members = objectMemberTexts(text);
  for (const name of names) {
    const member = members?.get(name);
    if (member !== undefined) found[name] = member;
  }
  return found;
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  return i;
}

/** Index just past the string literal that starts at `i`. */
function endOfString(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '"') return j + 1;
  }
  return text.length;
}

/** Index just past the value that starts at `i`, counting brackets instead of recursing. */
function endOfValue(text: string, i: number): number {
  let depth = 0;
  let j = i;
  while (j < text.length) {
    const c = text[j]!;
    if (c === '"') j = endOfString(text, j);
    else if (c === '{' || c === '[') {
      depth++;
      j++;
    } else if (c === '}' || c === ']') {
      if (depth === 0) return j;
      depth--;
      j++;
      if (depth === 0) return j;
    } else if (depth === 0 && (c === ',' || ' \t\n\r'.includes(c))) return j;
    else j++;
  }
  return j;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
