import * as z from 'zod/mini';

/** Answers whether a value satisfies a schema, without building zod's output copy. */
export type Validator = (value: unknown) => boolean;

type Def = z.core.$ZodTypeDef & Record<string, unknown>;
type CheckDef = z.core.$ZodCheckDef & Record<string, unknown>;

const { isObject, isPlainObject } = z.core.util;

/**
 * Compiles a zod schema into a predicate with the same verdict as `schema.safeParse(value).success`,
 * for the kinds of schema the delivery events use: objects (loose, strip or strict), strings with
 * pattern and length checks, safe integers, literals, arrays, optionals, never, unknown and records.
 *
 * Why: zod's parse copies every object and array it validates and allocates a result per field,
 * which made validation cost as much as JSON.parse itself on the ingest path. The ingest forwards
 * the raw body and only needs the verdict; the schemas stay the single source of truth, and zod
 * still parses whatever this predicate refuses, so that refusals keep zod's precise issues.
 *
 * Anything this compiler does not know (transforms, defaults, refinements, unions, other checks)
 * throws when the module loads rather than being guessed at, so a schema change cannot silently
 * widen what is accepted. Valid values equal zod's output because the schemas have no transforms.
 *
 * @example
 * const isContactCreated = compileValidator(ContactCreatedSchema);
 * if (isContactCreated(body)) route(body as ContactCreated);
 */
export function compileValidator(schema: z.core.$ZodType): Validator {
  const def = schema._zod.def as Def;
  const checks = [...((def.checks ?? []) as z.core.$ZodCheck[]).map((check) => check._zod.def as CheckDef)];
  // Format schemas (z.guid(), z.int()) are a type and a check at once.
  if (typeof def.check === 'string') checks.unshift(def as unknown as CheckDef);
  const base = compileType(def);
  if (checks.length === 0) return base;
  const tests = checks.map(compileCheck);
  return (value) => {
    if (!base(value)) return false;
    for (let i = 0; i < tests.length; i++) if (!tests[i]!(value)) return false;
    return true;
  };
}

function unsupported(what: string): never {
  throw new Error(`compileValidator: ${what} is not supported; add it here or parse with zod`);
}

function compileType(def: Def): Validator {
  if (def.coerce === true) unsupported('coercion');
  switch (def.type) {
    case 'string':
      return (value) => typeof value === 'string';
    case 'number':
      // z.number() refuses NaN and ±Infinity; its safeint format is a check (below).
      return (value) => typeof value === 'number' && Number.isFinite(value);
    case 'literal': {
      const values = new Set(def.values as unknown[]);
      return (value) => values.has(value);
    }
    case 'never':
      return () => false;
    case 'unknown':
      return () => true;
    case 'optional': {
      const inner = compileValidator(def.innerType as z.core.$ZodType);
      return (value) => value === undefined || inner(value);
    }
    case 'array': {
      const element = compileValidator(def.element as z.core.$ZodType);
      return (value) => {
        if (!Array.isArray(value)) return false;
        for (let i = 0; i < value.length; i++) if (!element(value[i])) return false;
        return true;
      };
    }
    case 'record':
      return compileRecord(def);
    case 'object':
      return compileObject(def);
    default:
      return unsupported(`schema type "${def.type}"`);
  }
}

function compileRecord(def: Def): Validator {
  const keyDef = (def.keyType as z.core.$ZodType)._zod.def as Def;
  if (keyDef.type !== 'string' || (keyDef.checks?.length ?? 0) > 0) {
    unsupported('a record key other than z.string()');
  }
  const valueType = def.valueType as z.core.$ZodType;
  if ((valueType._zod.def as Def).type === 'unknown') return (value) => isPlainObject(value);
  const element = compileValidator(valueType);
  return (value) => {
    if (!isPlainObject(value)) return false;
    for (const key of Reflect.ownKeys(value)) {
      if (key === '__proto__') continue;
      if (typeof key !== 'string' || !element((value as Record<string, unknown>)[key])) return false;
    }
    return true;
  };
}

function compileObject(def: Def): Validator {
  const shape = def.shape as Record<string, z.core.$ZodType>;
  const keys = Object.keys(shape).filter((key) => key !== '__proto__');
  const validators = keys.map((key) => compileValidator(shape[key]!));
  // zod lets an absent key pass only when its schema is optional on input.
  const optional = keys.map((key) => shape[key]!._zod.optin === 'optional');
  const catchall = def.catchall as z.core.$ZodType | undefined;
  const catchallType = catchall === undefined ? 'strip' : (catchall._zod.def as Def).type;
  if (catchallType !== 'strip' && catchallType !== 'unknown' && catchallType !== 'never') {
    unsupported(`an object catchall of type "${catchallType}"`);
  }
  const known = new Set(keys);
  return (value) => {
    if (!isObject(value)) return false;
    const input = value as Record<string, unknown>;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const field = input[key];
      if (optional[i]) {
        if (field !== undefined && !validators[i]!(field)) return false;
      } else if (!validators[i]!(field) || !(key in input)) {
        return false;
      }
    }
    if (catchallType === 'never') {
      for (const key in input) if (!known.has(key)) return false;
    }
    return true;
  };
}

function compileCheck(check: CheckDef): Validator {
  if (check.when !== undefined && !['min_length', 'max_length', 'length_equals'].includes(check.check)) {
    unsupported(`a conditional check "${check.check}"`);
  }
  switch (check.check) {
    case 'string_format': {
      const pattern = check.pattern as RegExp | undefined;
      // Formats with their own code (url, jwt, ...) carry no pattern, or more than one.
      if (!(pattern instanceof RegExp) || !['regex', 'guid', 'uuid'].includes(check.format as string)) {
        return unsupported(`the string format "${String(check.format)}"`);
      }
      return (value) => {
        pattern.lastIndex = 0;
        return pattern.test(value as string);
      };
    }
    case 'number_format':
      if (check.format !== 'safeint') return unsupported(`the number format "${String(check.format)}"`);
      return (value) => Number.isSafeInteger(value);
    case 'min_length': {
      const minimum = check.minimum as number;
      return (value) => (value as { length: number }).length >= minimum;
    }
    case 'max_length': {
      const maximum = check.maximum as number;
      return (value) => (value as { length: number }).length <= maximum;
    }
    case 'length_equals': {
      const length = check.length as number;
      return (value) => (value as { length: number }).length === length;
    }
    default:
      return unsupported(`the check "${check.check}"`);
  }
}
