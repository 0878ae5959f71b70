import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { SecretsJsonSchema } from '../../lib/config/secrets-schema.js';
import { generateValidatorModule, type ValidatorModuleSpec } from '../../lib/events/codegen.js';
import { checkDeliveryEvent, KNOWN_EVENTS, parseDeliveryEvent } from '../../lib/events/index.js';
import {
  ActivityChangedSchema,
  ActivityCreatedSchema,
  ActivityDeletedSchema,
  ContactChangedSchema,
  ContactCreatedSchema,
  ContactDeletedSchema,
  ContactSoftDeletedSchema,
  EnvelopeSchema,
  SCHEMA_BY_EVENT,
  WebhookErrorsSchema,
  WebhookStartedSchema,
  WebhookStoppedSchema,
} from '../../lib/events/schemas.js';
import { EVENT_VALIDATORS, isEnvelope, isSecretsJson } from '../../lib/generated/validators.js';
import { buildSampleBody, SAMPLE_EVENTS } from '../../lib/samples.js';
import { generateProjectValidators, readProjectValidators } from '../../scripts/generate-validators.js';
import { wrongValueArb } from '../support/fuzz.js';

const SCHEMAS = {
  'webhook.started': WebhookStartedSchema(),
  'webhook.stopped': WebhookStoppedSchema(),
  'webhook.errors': WebhookErrorsSchema(),
  'contact.created': ContactCreatedSchema(),
  'contact.changed': ContactChangedSchema(),
  'contact.softdeleted': ContactSoftDeletedSchema(),
  'contact.deleted': ContactDeletedSchema(),
  'activity.created': ActivityCreatedSchema(),
  'activity.changed': ActivityChangedSchema(),
  'activity.deleted': ActivityDeletedSchema(),
} as const;

/** Values that sit on the edges of zod's rules (safe integers, lengths, presence). */
const edgeValueArb: fc.Arbitrary<unknown> = fc.constantFrom(
  undefined,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  -0,
  0.5,
  2 ** 53,
  2 ** 53 - 1,
  -(2 ** 53) + 1,
  1e21,
  '',
  'contact',
  'activity',
  'webhook.started',
  'contact.created',
  [],
  ['a'],
  [1],
  {},
  { associate_id: 1, contact_id: 2 },
  '0001-01-01T00:00:00',
  '2025-05-14T16:11:02.4593434+02:00',
  '2018-04-24T08:18:42.089895Z',
  '2018-04-24T08:18:42Z',
  'F5A2C7E0-1B3D-4E5F-8A9B-0C1D2E3F4A5B',
);

const valueArb = fc.oneof(wrongValueArb, edgeValueArb);

/** A sample body of any event, then up to three edits: set, delete or add a key at any depth. */
const mutatedBodyArb = fc
  .tuple(
    fc.constantFrom(...SAMPLE_EVENTS),
    fc.array(
      fc.record({
        op: fc.constantFrom('set', 'delete', 'add'),
        pick: fc.nat(),
        nested: fc.boolean(),
        key: fc.constantFrom('Custom', '__proto__', 'constructor', 'toString', 'Entity', 'Values', 'x'),
        value: valueArb,
      }),
      { maxLength: 3 },
    ),
  )
  .map(([event, edits]) => {
    const body = structuredClone(buildSampleBody(event, { primaryKey: 42 })) as Record<string, unknown>;
    for (const edit of edits) {
      let target: Record<string, unknown> = body;
      if (edit.nested) {
        const inner = Object.values(body).filter((v) => typeof v === 'object' && v !== null);
        if (inner.length > 0) target = inner[edit.pick % inner.length] as Record<string, unknown>;
      }
      const keys = Object.keys(target);
      const key = edit.op === 'add' || keys.length === 0 ? edit.key : keys[edit.pick % keys.length]!;
      if (edit.op === 'delete') delete target[key];
      else
        Object.defineProperty(target, key, {
          value: edit.value,
          enumerable: true,
          writable: true,
          configurable: true,
        });
    }
    return body;
  });

/** The checks a spec generates, loaded as the functions load the checked-in module (an ES module). */
async function load(spec: ValidatorModuleSpec): Promise<Record<string, (value: unknown) => boolean>> {
  const { source } = generateValidatorModule(spec);
  return (await import(`data:text/javascript,${encodeURIComponent(source)}`)) as Record<
    string,
    (value: unknown) => boolean
  >;
}

const checkOf = (schema: z.core.$ZodType) =>
  load({ maps: {}, functions: { check: schema } }).then((m) => m.check!);

describe('lib/generated/validators.js', () => {
  it('is what the schemas generate now (run `npm run generate` after changing a schema)', () => {
    expect(readProjectValidators()).toEqual(generateProjectValidators());
  });

  it('gives zod’s verdict for every event schema and the envelope on mutated sample bodies', () => {
    const checks = Object.entries(SCHEMAS).map(
      ([name, schema]) => [schema, EVENT_VALIDATORS.get(name)!] as const,
    );
    let valid = 0;
    let invalid = 0;
    fc.assert(
      fc.property(mutatedBodyArb, (body) => {
        for (const [schema, check] of checks) {
          const verdict = schema.safeParse(body).success;
          expect(check(body)).toBe(verdict);
          if (verdict) valid++;
          else invalid++;
        }
        expect(isEnvelope(body)).toBe(EnvelopeSchema.safeParse(body).success);
      }),
      { numRuns: 3000 },
    );
    // The generator must reach both verdicts, or the comparison proves nothing.
    expect(valid).toBeGreaterThan(500);
    expect(invalid).toBeGreaterThan(500);
  });

  it('gives zod’s verdict on the secrets JSON (WEBHOOK_SECRETS and the SSM parameter)', () => {
    const secretsArb = fc.oneof(
      fc.dictionary(fc.string({ maxLength: 3 }), fc.array(fc.string({ maxLength: 3 }), { maxLength: 3 })),
      fc.dictionary(fc.string({ maxLength: 3 }), valueArb),
      valueArb,
      fc.jsonValue(),
    );
    let valid = 0;
    fc.assert(
      fc.property(secretsArb, (value) => {
        const verdict = SecretsJsonSchema.safeParse(value).success;
        expect(isSecretsJson(value)).toBe(verdict);
        if (verdict) valid++;
      }),
      { numRuns: 2000 },
    );
    expect(valid).toBeGreaterThan(100);
  });

  it('has a check for every event schema of the spec, and nothing else', () => {
    for (const [name, schema] of Object.entries(SCHEMAS)) {
      expect(schema.shape.Event.def.values, name).toEqual([name]);
    }
    expect([...EVENT_VALIDATORS.keys()]).toEqual([...SCHEMA_BY_EVENT.keys()]);
    expect([...KNOWN_EVENTS]).toEqual(Object.keys(SCHEMAS));
    const person = { ...buildSampleBody('contact.changed'), Event: 'person.created', Entity: 'person' };
    expect(checkDeliveryEvent(person)).toBeUndefined();
    expect(
      checkDeliveryEvent({ ...buildSampleBody('contact.changed'), Event: 'constructor' }),
    ).toBeUndefined();
  });

  it('answers for non-objects as zod does', () => {
    const check = EVENT_VALIDATORS.get('contact.created')!;
    for (const value of [null, undefined, 1, 'x', [], [buildSampleBody('contact.created')], true]) {
      expect(check(value)).toBe(ContactCreatedSchema().safeParse(value).success);
    }
  });
});

describe('parseDeliveryEvent', () => {
  it('returns the valid body itself, equal to zod’s output', async () => {
    for (const name of SAMPLE_EVENTS) {
      const body = { ...buildSampleBody(name), CustomProperty: { nested: [1, 'two'] } };
      const outcome = await parseDeliveryEvent(body);
      expect(outcome).toEqual({ ok: true, event: SCHEMAS[name].parse(body) });
      expect(outcome.ok && outcome.event).toBe(body);
      expect(checkDeliveryEvent(body)).toBe(body);
    }
  });

  it('explains a refused body with zod’s issues, and an event outside the spec as unknown', async () => {
    const body = { ...buildSampleBody('contact.created'), PrimaryKey: 1.5 };
    expect(await parseDeliveryEvent(body)).toEqual({
      ok: false,
      reason: 'invalid-event',
      detail: expect.stringContaining('PrimaryKey'),
    });
    const person = { ...buildSampleBody('contact.changed'), Event: 'person.created', Entity: 'person' };
    expect(await parseDeliveryEvent(person)).toEqual({
      ok: false,
      reason: 'unknown-event',
      detail: 'event "person.created" is not in the spec',
    });
  });
});

describe('generateValidatorModule', () => {
  it('refuses unknown keys of strict objects and accepts them in loose ones', async () => {
    const { strict, loose, strip } = await load({
      maps: {},
      functions: {
        strict: z.strictObject({ a: z.string() }),
        loose: z.looseObject({ a: z.string() }),
        strip: z.object({ a: z.string() }),
      },
    });
    expect([strict!({ a: 'x' }), strict!({ a: 'x', b: 1 })]).toEqual([true, false]);
    expect([loose!({ a: 'x', b: 1 }), strip!({ a: 'x', b: 1 }), strip!({ b: 1 })]).toEqual([
      true,
      true,
      false,
    ]);
  });

  it('requires a required key to be present even when its schema accepts undefined', async () => {
    const schema = z.object({ a: z.unknown(), b: z.optional(z.string()) });
    const check = await checkOf(schema);
    for (const value of [{}, { a: undefined }, { a: 1, b: undefined }, { a: 1, b: 2 }]) {
      expect(check(value)).toBe(schema.safeParse(value).success);
    }
  });

  it('checks records as zod does: symbol keys, key checks, inherited and __proto__ keys', async () => {
    const schema = z.record(z.string().check(z.minLength(2)), z.int());
    const check = await checkOf(schema);
    const inherited = Object.create({ zz: 'x' }) as Record<string, unknown>;
    inherited.ab = 1;
    const values = [
      { ab: 1 },
      { a: 1 },
      { ab: 1.5 },
      { [Symbol('s')]: 1 },
      JSON.parse('{"__proto__": "x", "ab": 2}'),
      inherited,
      new Map(),
      [],
    ];
    for (const value of values) expect(check(value)).toBe(schema.safeParse(value).success);
  });

  it('resets a global pattern between tests, as zod does', async () => {
    const schema = z.string().check(z.regex(/^a+$/g));
    const check = await checkOf(schema);
    expect([check('aa'), check('aa'), check('ab')]).toEqual([true, true, false]);
  });

  it('writes key names, literals and patterns as data: a hostile key cannot break out of its string', async () => {
    const key = '"]); throw new Error("injected"); //\u2028';
    const schema = z.object({ [key]: z.literal('"); throw 1; //') });
    const check = await checkOf(schema);
    expect([check({ [key]: '"); throw 1; //' }), check({})]).toEqual([true, false]);
  });

  it('refuses what it cannot judge exactly', () => {
    const cases = [
      z.pipe(
        z.string(),
        z.transform((s) => s.length),
      ),
      z.union([z.string(), z.int()]),
      z.string().check(z.refine((s) => s.length > 1)),
      z.email(),
      z.object({ a: z._default(z.string(), 'x') }),
      z.catchall(z.object({}), z.string()),
      z.looseRecord(z.string(), z.unknown()),
      z.object({ a: z.literal(1n) }),
    ];
    for (const schema of cases) {
      expect(() => generateValidatorModule({ maps: {}, functions: { check: schema } })).toThrow(
        /not supported/,
      );
    }
  });
});
