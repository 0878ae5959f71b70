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
  JSON.parse(text); // validates: the scan below relies on well-formed JSON
  let i = skipSpace(text, 0);
  if (text[i] !== '{') throw new SyntaxError('expected a JSON object');
  const members = new Map<string, string>();
  i++;
  for (;;) {
    i = skipSpace(text, i);
    if (text[i] === '}') return members;
    const keyEnd = scanString(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipSpace(text, keyEnd) + 1; // past ':'
    const valueStart = skipSpace(text, i);
    const valueEnd = scanValue(text, valueStart);
    members.delete(key);
    members.set(key, text.slice(valueStart, valueEnd));
    i = skipSpace(text, valueEnd);
    if (text[i] === ',') i++;
  }
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && ' \t\n\r'.includes(text[i] as string)) i++;
  return i;
}

/** The index just past the string starting at `i` (on its opening quote). */
function scanString(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '"') return j + 1;
  }
  throw new SyntaxError('unterminated string');
}

/** The index just past the value starting at `i`. */
function scanValue(text: string, i: number): number {
  const first = text[i];
  if (first === '"') return scanString(text, i);
  if (first !== '{' && first !== '[') {
    let j = i;
    while (j < text.length && !',}] \t\n\r'.includes(text[j] as string)) j++;
    return j;
  }
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const c = text[j];
    if (c === '"') j = scanString(text, j) - 1;
    else if (c === '{' || c === '[') depth++;
    else if ((c === '}' || c === ']') && --depth === 0) return j + 1;
  }
  throw new SyntaxError('unterminated value');
}
