/** The type tags of a custom table's FieldValues, as the CRM writes them: `[I:6]`, `[DT:...]`, ... */
export const TYPED_TAGS = ['I', 'F', 'B', 'DT', 'S'] as const;
export type TypedTag = (typeof TYPED_TAGS)[number];

/** A plain value of a field: what the archive answers and the CRM's database holds. */
export type PlainValue = string | number | boolean;

const TYPED = /^\[(I|F|B|DT|S):(.*)\]$/s;
const ISO = /^(\d{4})-(\d\d)-(\d\d)T(\d\d:\d\d:\d\d)/;
const CRM_DATE_TIME = /^(\d\d)\/(\d\d)\/(\d{4}) (\d\d:\d\d:\d\d)$/;

/** A value that cannot be written with the tag asked for (a text where a number is expected). */
export class TypedValueError extends Error {
  constructor(value: unknown, tag: TypedTag) {
    super(`${JSON.stringify(value)} cannot be written as [${tag}:...]`);
    this.name = 'TypedValueError';
  }
}

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
  if (tag === 'B') return text === 'True';
  if (tag === 'DT') return text.replace(CRM_DATE_TIME, '$3-$1-$2T$4');
  return text;
}

/**
 * A custom table's field as the CRM writes it in FieldValues (crm-webhook samples): `[I:6]`, `[F:1.5]`,
 * `[B:True]`, `[DT:MM/dd/yyyy HH:mm:ss]` or `[S:text]`. With `tag` (the form a stored row of the table
 * shows for that field), the value is written in that form, so a row the CRM did not change compares
 * equal as text; without it, the form follows the value's type. Throws {@link TypedValueError} for a
 * value the tag cannot hold.
 *
 * @example encodeTyped(130, 'F') // '[F:130]' (encodeTyped(130) is '[I:130]')
 */
export function encodeTyped(value: PlainValue, tag: TypedTag = tagOfPlain(value)): string {
  switch (tag) {
    case 'I':
    case 'F': {
      const number = typeof value === 'boolean' || value === '' ? Number.NaN : Number(value);
      if (!Number.isFinite(number) || (tag === 'I' && !Number.isInteger(number)))
        throw new TypedValueError(value, tag);
      return `[${tag}:${number}]`;
    }
    case 'B': {
      const truth = value === true || value === 1 || value === 'True' || value === 'true' || value === '1';
      const falsity =
        value === false || value === 0 || value === 'False' || value === 'false' || value === '0';
      if (!truth && !falsity) throw new TypedValueError(value, tag);
      return `[B:${truth ? 'True' : 'False'}]`;
    }
    case 'DT': {
      const text = String(value);
      if (CRM_DATE_TIME.test(text)) return `[DT:${text}]`;
      const date = typeof value === 'string' ? ISO.exec(value) : null;
      if (date === null) throw new TypedValueError(value, tag);
      return `[DT:${date[2]}/${date[3]}/${date[1]} ${date[4]}]`;
    }
    case 'S':
      return `[S:${String(value)}]`;
  }
}

function tagOfPlain(value: PlainValue): TypedTag {
  if (typeof value === 'boolean') return 'B';
  if (typeof value === 'number') return Number.isInteger(value) ? 'I' : 'F';
  return ISO.test(value) ? 'DT' : 'S';
}
