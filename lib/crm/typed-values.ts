/** The type tags of a custom table's FieldValues, as the CRM writes them: `[I:6]`, `[DT:...]`, ... */
export const TYPED_TAGS = ['I', 'F', 'B', 'DT', 'S'] as const;
export type TypedTag = (typeof TYPED_TAGS)[number];

/** A plain value of a field: what the archive answers and the CRM's database holds. */
export type PlainValue = string | number | boolean;

const TYPED = /^\[(I|F|B|DT|S):(.*)\]$/s;
/** An ISO time as far as the CRM writes it (to the second), and anything after it. */
const ISO_TIME = /^(\d{4})-(\d\d)-(\d\d)T(\d\d:\d\d:\d\d).*$/s;
/** A number's text as JavaScript writes it (`-1.5`, `1e+21`), or as a decimal column's text may hold it (`129.90`). */
const DECIMAL = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i;
const CRM_DATE_TIME = /^(\d\d)\/(\d\d)\/(\d{4}) (\d\d:\d\d:\d\d)$/;

/** The tag of a typed string (`[F:1.5]` → `F`), undefined for anything else. */
export function typedTagOf(value: unknown): TypedTag | undefined {
  return typeof value === 'string' ? (TYPED.exec(value)?.[1] as TypedTag | undefined) : undefined;
}

/**
 * A typed string as its plain value: `[I:6]` → 6, `[F:1.5]` → 1.5, `[B:True]` → true,
 * `[DT:09/16/2025 10:11:12]` → `2025-09-16T10:11:12`, `[S:x]` → `x`; anything else as it is.
 */
export function decodeTyped(value: PlainValue): PlainValue {
  const typed = typeof value === 'string' ? TYPED.exec(value) : null;
  if (typed === null) return value;
  const [, tag, text] = typed as unknown as [string, TypedTag, string];
  if (tag === 'I' || tag === 'F') return Number(text);
  if (tag === 'B') return /^true$/i.test(text);
  if (tag === 'DT') return text.replace(CRM_DATE_TIME, '$3-$1-$2T$4');
  return text;
}

/**
 * A custom table's field as the CRM writes it in FieldValues (crm-webhook samples): `[I:6]`, `[F:1.5]`,
 * `[B:True]`, `[DT:MM/dd/yyyy HH:mm:ss]` or `[S:text]`, in the form `tag` says (the one a stored row of
 * the table shows for that field, so a row the CRM did not change compares equal as text). Undefined
 * for a value the tag cannot hold (a text where a number is expected, a whole number past 2^53).
 *
 * @example encodeTyped(130, 'F') // '[F:130]' (with plainTag(130), '[I:130]')
 */
export function encodeTyped(value: PlainValue, tag: TypedTag): string | undefined {
  const text = String(value);
  let written: string | undefined = text;
  if (tag === 'I' || tag === 'F') {
    const number = numeralValue(text);
    written =
      number !== undefined && (tag === 'F' || Number.isSafeInteger(number)) ? String(number) : undefined;
  } else if (tag === 'B')
    written = /^(true|1)$/i.test(text) ? 'True' : /^(false|0)$/i.test(text) ? 'False' : undefined;
  else if (tag === 'DT' && !CRM_DATE_TIME.test(text))
    written = text.replace(ISO_TIME, '$2/$3/$1 $4').match(CRM_DATE_TIME)?.[0];
  return written === undefined ? undefined : `[${tag}:${written}]`;
}

/**
 * The number a decimal numeral spells (`"5"`, `"-1.5"`, `"129.90"`), undefined for any other text:
 * Number() also reads `''`, `' 5 '`, `'0x10'` and `'0b11'` as numbers.
 */
export function numeralValue(text: string): number | undefined {
  const number = DECIMAL.test(text) ? Number(text) : Number.NaN;
  return Number.isFinite(number) ? number : undefined;
}

/** The form of a plain value by its own type: integer I, other number F, boolean B, ISO time DT, text S. */
export function plainTag(value: PlainValue): TypedTag {
  if (typeof value === 'boolean') return 'B';
  if (typeof value === 'number') return Number.isInteger(value) ? 'I' : 'F';
  return ISO_TIME.test(value) ? 'DT' : 'S';
}
