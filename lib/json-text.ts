/**
 * A piece of JSON kept as the exact text the sender wrote (a .NET long keeps its digits, 1e-200 stays
 * 1e-200, any depth survives). {@link stringifyExact} writes the text itself; plain `JSON.stringify`
 * sees its parsed value. (Node 20 has no `JSON.rawJSON`, hence this small class.) The text must be
 * valid JSON.
 */
export class JsonText {
  constructor(readonly text: string) {}

  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/**
 * `JSON.stringify(value, null, space)`, except that every {@link JsonText} inside, at any depth, is
 * written as its exact text (not re-indented) instead of a re-serialised parse. Undefined members are
 * left out, undefined array items written as null and a cycle refused with a TypeError, as
 * JSON.stringify does (which writes nothing at all for a lone undefined; this writes null).
 *
 * @example stringifyExact({ a: new JsonText('9223372036854775807'), b: [1] }) === '{"a":9223372036854775807,"b":[1]}'
 */
export function stringifyExact(value: unknown, space = 0): string {
  const gap = ' '.repeat(space);
  const ancestors = new Set<object>();
  const write = (item: unknown, indent: string): string | undefined => {
    if (item instanceof JsonText) return item.text;
    if (typeof item !== 'object' || item === null) return JSON.stringify(item);
    if (typeof (item as { toJSON?: unknown }).toJSON === 'function') {
      return write((item as { toJSON(): unknown }).toJSON(), indent);
    }
    if (ancestors.has(item)) throw new TypeError('Converting circular structure to JSON');
    ancestors.add(item);
    try {
      return container(item, indent);
    } finally {
      ancestors.delete(item);
    }
  };
  const container = (item: object, indent: string): string => {
    const inner = indent + gap;
    const wrap = (open: string, parts: string[], close: string) =>
      parts.length === 0
        ? open + close
        : gap === ''
          ? `${open}${parts.join(',')}${close}`
          : `${open}\n${inner}${parts.join(`,\n${inner}`)}\n${indent}${close}`;
    if (Array.isArray(item))
      return wrap(
        '[',
        item.map((v) => write(v, inner) ?? 'null'),
        ']',
      );
    const members = Object.entries(item).flatMap(([key, v]) => {
      const text = write(v, inner);
      return text === undefined ? [] : [`${JSON.stringify(key)}:${gap === '' ? '' : ' '}${text}`];
    });
    return wrap('{', members, '}');
  };
  return write(value, '') ?? 'null';
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
 * {@link objectMemberTexts} of a text that must be a JSON object: validated first (the scan relies
 * on well-formed JSON); throws a SyntaxError otherwise.
 *
 * @example objectMembers('{"A": 12345678901234567890, "B": [1]}') // Map { 'A' => '12345678901234567890', 'B' => '[1]' }
 */
export function objectMembers(text: string): Map<string, string> {
  JSON.parse(text);
  const members = objectMemberTexts(text);
  if (members === undefined) throw new SyntaxError('expected a JSON object');
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
