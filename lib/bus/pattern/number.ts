/**
 * A number written in a subscriptions file that no double holds exactly: `1E-325` reads as 0,
 * `9007199254740993` as 9007199254740992. The YAML loader keeps it as written so that
 * {@link compilePattern} can refuse it, as EventBridge refuses it.
 */
export class InexactNumber {
  constructor(readonly text: string) {}
}

/**
 * Whether a JSON or YAML decimal number is exactly the double it reads as: equal in value to the
 * shortest decimal that gives that double back. EventBridge's matcher (aws/event-ruler,
 * ComparableNumber) compares the same two with BigDecimal and refuses a pattern's number that
 * differs: `0.1` and `3.018e2` pass, `1E-325`, `1e400` and `0.30000000000000001` do not.
 *
 * @example isExactDouble('1E-325') // false: it reads as 0
 */
export function isExactDouble(text: string): boolean {
  const value = Number(text);
  return Number.isFinite(value) && decimalKey(text) === decimalKey(String(value));
}

/** A decimal's value as `-0.<digits>e<exponent>` with no leading or trailing zero digit ('0' for zero). */
function decimalKey(text: string): string | undefined {
  const parts = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (parts === null) return undefined;
  const [, sign, whole = '', fraction = '', exponent = '0'] = parts;
  const digits = whole + fraction;
  const significant = digits.replace(/^0+/, '');
  const trimmed = significant.replace(/0+$/, '');
  if (trimmed === '') return '0';
  const scale = Number(exponent) + whole.length - (digits.length - significant.length);
  return `${sign === '-' ? '-' : ''}0.${trimmed}e${scale}`;
}
