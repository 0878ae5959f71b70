import { PatternError } from './errors.js';

/**
 * Compiles an EventBridge `wildcard` operand: `*` matches any run of characters (none included),
 * `\*` is a literal asterisk and `\\` a literal backslash. Matching walks the literal segments
 * left to right, so no regular expression (and no backtracking) is involved.
 */
export function compileWildcard(pattern: string, path: string): (value: string) => boolean {
  const segments: string[] = [];
  let current = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i];
    if (char === '\\') {
      const next = pattern[i + 1];
      if (next !== '*' && next !== '\\') {
        throw new PatternError(path, 'in a wildcard, a backslash may only escape * or \\');
      }
      current += next;
      i++;
    } else if (char === '*') {
      if (pattern[i + 1] === '*') throw new PatternError(path, 'consecutive * are not allowed in a wildcard');
      segments.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  segments.push(current);

  const first = segments[0] ?? '';
  if (segments.length === 1) return (value) => value === first;
  const last = segments.at(-1) ?? '';
  const middles = segments.slice(1, -1);
  return (value) => {
    const end = value.length - last.length;
    if (end < first.length || !value.startsWith(first) || !value.endsWith(last)) return false;
    let from = first.length;
    for (const middle of middles) {
      const found = value.indexOf(middle, from);
      if (found < 0 || found + middle.length > end) return false;
      from = found + middle.length;
    }
    return true;
  };
}
