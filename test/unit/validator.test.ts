import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import {
  ActivityChangedSchema,
  ActivityCreatedSchema,
  ActivityDeletedSchema,
  ContactChangedSchema,
  ContactCreatedSchema,
  ContactDeletedSchema,
  ContactSoftDeletedSchema,
  EnvelopeSchema,
  parseDeliveryEvent,
  validatorFor,
  WebhookErrorsSchema,
  WebhookStartedSchema,
  WebhookStoppedSchema,
} from '../../lib/events/index.js';
import { compileValidator } from '../../lib/events/validator.js';
import { buildSampleBody, SAMPLE_EVENTS } from '../../lib/samples.js';
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

describe('compileValidator', () => {
  it('gives zod’s verdict for every event schema on mutated sample bodies', () => {
    // Both forms: generated code (the default) and the loop used where code generation is off.
    const validators = Object.entries(SCHEMAS).flatMap(([name, schema]) => [
      [name, schema, compileValidator(schema)] as const,
      [name, schema, compileValidator(schema, { generate: false })] as const,
    ]);
    const envelope = compileValidator(EnvelopeSchema);
    let valid = 0;
    let invalid = 0;
    fc.assert(
      fc.property(mutatedBodyArb, (body) => {
        for (const [, schema, validate] of validators) {
          const verdict = schema.safeParse(body).success;
          expect(validate(body)).toBe(verdict);
          if (verdict) valid++;
          else invalid++;
        }
        expect(envelope(body)).toBe(EnvelopeSchema.safeParse(body).success);
      }),
      { numRuns: 3000 },
    );
    // The generator must reach both verdicts, or the comparison proves nothing.
    expect(valid).toBeGreaterThan(500);
    expect(invalid).toBeGreaterThan(500);
  });

  it('compiles every event schema of the spec (no event falls back to zod)', () => {
    for (const [name, schema] of Object.entries(SCHEMAS)) {
      expect(schema.shape.Event.def.values, name).toEqual([name]);
      expect(() => compileValidator(schema), name).not.toThrow();
      expect(validatorFor(name)?.toString(), name).not.toContain('safeParse');
    }
    expect(validatorFor('person.created')).toBeUndefined();
  });

  it('answers for non-objects as zod does', () => {
    const validate = compileValidator(ContactCreatedSchema());
    for (const value of [null, undefined, 1, 'x', [], [buildSampleBody('contact.created')], true]) {
      expect(validate(value)).toBe(ContactCreatedSchema().safeParse(value).success);
    }
  });

  it('returns the valid body itself, equal to zod’s output', () => {
    for (const name of SAMPLE_EVENTS) {
      const body = { ...buildSampleBody(name), CustomProperty: { nested: [1, 'two'] } };
      const outcome = parseDeliveryEvent(body);
      expect(outcome).toEqual({ ok: true, event: SCHEMAS[name].parse(body) });
      expect(outcome.ok && outcome.event).toBe(body);
    }
  });

  it('keeps zod’s issues for refused bodies', () => {
    const body = { ...buildSampleBody('contact.created'), PrimaryKey: 1.5 };
    expect(parseDeliveryEvent(body)).toEqual({
      ok: false,
      reason: 'invalid-event',
      detail: expect.stringContaining('PrimaryKey'),
    });
  });

  it('refuses unknown keys of strict objects and accepts them in loose ones', () => {
    for (const generate of [true, false]) {
      const strict = compileValidator(z.strictObject({ a: z.string() }), { generate });
      const loose = compileValidator(z.looseObject({ a: z.string() }), { generate });
      const strip = compileValidator(z.object({ a: z.string() }), { generate });
      expect([strict({ a: 'x' }), strict({ a: 'x', b: 1 })]).toEqual([true, false]);
      expect([loose({ a: 'x', b: 1 }), strip({ a: 'x', b: 1 }), strip({ b: 1 })]).toEqual([
        true,
        true,
        false,
      ]);
    }
  });

  it('requires a required key to be present even when its schema accepts undefined', () => {
    const schema = z.object({ a: z.unknown(), b: z.optional(z.string()) });
    for (const generate of [true, false]) {
      const validate = compileValidator(schema, { generate });
      for (const value of [{}, { a: undefined }, { a: 1, b: undefined }, { a: 1, b: 2 }]) {
        expect(validate(value)).toBe(schema.safeParse(value).success);
      }
    }
  });

  it('refuses at compile time what it cannot judge exactly', () => {
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
      z.record(z.string().check(z.minLength(2)), z.unknown()),
    ];
    for (const schema of cases) expect(() => compileValidator(schema)).toThrow(/not supported/);
  });
});
