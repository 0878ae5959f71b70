import type * as z from 'zod/mini';

/** Answers whether a value satisfies a schema, without building zod's output copy. */
export type Validator = (value: unknown) => boolean;

export interface CompileOptions {
  /** Generate straight-line code for objects (default true); false keeps the interpreted loop. */
  generate?: boolean;
}

type Def = z.core.$ZodTypeDef & Record<string, unknown>;
type CheckDef = z.core.$ZodCheckDef & Record<string, unknown>;

/** What zod calls an object (its `util.isObject`, restated: importing zod's util adds 8 KB to a bundle). */
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What zod's records accept (its `util.isPlainObject`, restated). */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (!isObject(value)) return false;
  const ctor = value.constructor;
  if (ctor === undefined || typeof ctor !== 'function') return true;
  const prototype: unknown = ctor.prototype;
  return isObject(prototype) && Object.hasOwn(prototype, 'isPrototypeOf');
}

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
 * throws rather than being guessed at, so a schema change cannot silently widen what is accepted:
 * `validatorFor` then leaves that event to zod, and the validator test, which compiles every event
 * schema, fails. Valid values equal zod's output because the schemas have no transforms.
 *
 * @example
 * const isContactCreated = compileValidator(ContactCreatedSchema());
 * if (isContactCreated(body)) route(body as ContactCreated);
 */
export function compileValidator(schema: z.core.$ZodType, options: CompileOptions = {}): Validator {
  const def = schema._zod.def as Def;
  const checks = ((def.checks ?? []) as z.core.$ZodCheck[]).map((check) => check._zod.def as CheckDef);
  // Format schemas (z.guid(), z.int()) are a type and a check at once.
  if (typeof def.check === 'string') checks.unshift(def as unknown as CheckDef);
  const base = compileType(def, options);
  if (checks.length === 0) return base;
  const tests = checks.map(compileCheck);
  // The shapes the events use, as one function each: a call less per field on the hot path.
  if (tests.length === 1) {
    const test = tests[0]!;
    if (def.type === 'number' && checks[0]!.check === 'number_format') return test;
    return (value) => base(value) && test(value);
  }
  return (value) => {
    if (!base(value)) return false;
    for (let i = 0; i < tests.length; i++) if (!tests[i]!(value)) return false;
    return true;
  };
}

function unsupported(what: string): never {
  throw new Error(`compileValidator: ${what} is not supported; add it here or parse with zod`);
}

function compileType(def: Def, options: CompileOptions): Validator {
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
      const inner = compileValidator(def.innerType as z.core.$ZodType, options);
      return (value) => value === undefined || inner(value);
    }
    case 'array': {
      const element = compileValidator(def.element as z.core.$ZodType, options);
      return (value) => {
        if (!Array.isArray(value)) return false;
        for (let i = 0; i < value.length; i++) if (!element(value[i])) return false;
        return true;
      };
    }
    case 'record':
      return compileRecord(def, options);
    case 'object':
      return compileObject(def, options);
    default:
      return unsupported(`schema type "${def.type}"`);
  }
}

function compileRecord(def: Def, options: CompileOptions): Validator {
  const keyDef = (def.keyType as z.core.$ZodType)._zod.def as Def;
  if (keyDef.type !== 'string' || (keyDef.checks?.length ?? 0) > 0) {
    unsupported('a record key other than z.string()');
  }
  const valueType = def.valueType as z.core.$ZodType;
  if ((valueType._zod.def as Def).type === 'unknown') return (value) => isPlainObject(value);
  const element = compileValidator(valueType, options);
  return (value) => {
    if (!isPlainObject(value)) return false;
    for (const key of Reflect.ownKeys(value as object)) {
      if (key === '__proto__') continue;
      if (typeof key !== 'string' || !element((value as Record<string, unknown>)[key])) return false;
    }
    return true;
  };
}

function compileObject(def: Def, options: CompileOptions): Validator {
  const shape = def.shape as Record<string, z.core.$ZodType>;
  const keys = Object.keys(shape).filter((key) => key !== '__proto__');
  const validators = keys.map((key) => compileValidator(shape[key]!, options));
  // zod lets an absent key pass only when its schema is optional on input.
  const optional = keys.map((key) => shape[key]!._zod.optin === 'optional');
  // A required key whose schema accepts undefined (z.unknown()) must still be present.
  const presence = keys.map((_, i) => !optional[i] && validators[i]!(undefined));
  const catchall = def.catchall as z.core.$ZodType | undefined;
  const catchallType = catchall === undefined ? 'strip' : (catchall._zod.def as Def).type;
  if (catchallType !== 'strip' && catchallType !== 'unknown' && catchallType !== 'never') {
    unsupported(`an object catchall of type "${catchallType}"`);
  }
  const known = new Set(keys);
  const hasUnknownKey = (input: Record<string, unknown>) => {
    for (const key in input) if (!known.has(key)) return true;
    return false;
  };
  const strict = catchallType === 'never';
  return (
    (options.generate !== false
      ? generateObject(keys, validators, optional, presence, strict, hasUnknownKey)
      : undefined) ??
    ((value) => {
      if (!isObject(value)) return false;
      const input = value as Record<string, unknown>;
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!;
        const field = input[key];
        if (optional[i]) {
          if (field !== undefined && !validators[i]!(field)) return false;
        } else if (!validators[i]!(field) || (presence[i] && !(key in input))) {
          return false;
        }
      }
      return !(strict && hasUnknownKey(input));
    })
  );
}

/**
 * The object check as straight-line code, as zod's own JIT does: one named property load and one
 * call of a fixed validator per key, which V8 caches and inlines, where the loop above goes through
 * a generic keyed load and a megamorphic call for every field. Keys are written as JSON string
 * literals; undefined when code generation from strings is disabled (the loop is then used).
 */
function generateObject(
  keys: readonly string[],
  validators: readonly Validator[],
  optional: readonly boolean[],
  presence: readonly boolean[],
  strict: boolean,
  hasUnknownKey: (input: Record<string, unknown>) => boolean,
): Validator | undefined {
  const lines = ['if (typeof input !== "object" || input === null || Array.isArray(input)) return false;'];
  keys.forEach((key, i) => {
    const name = JSON.stringify(key);
    if (optional[i]) {
      lines.push(`{ const field = input[${name}]; if (field !== undefined && !v${i}(field)) return false; }`);
    } else {
      lines.push(`if (!v${i}(input[${name}])) return false;`);
      if (presence[i]) lines.push(`if (!(${name} in input)) return false;`);
    }
  });
  lines.push(strict ? 'return !hasUnknownKey(input);' : 'return true;');
  const parameters = [...keys.map((_, i) => `v${i}`), 'hasUnknownKey'];
  const body = `return function validate(input) {\n${lines.join('\n')}\n};`;
  try {
    return new Function(...parameters, body)(...validators, hasUnknownKey) as Validator;
  } catch {
    return undefined;
  }
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
