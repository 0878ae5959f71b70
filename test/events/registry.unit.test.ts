import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { parseSecretsJson } from '../../lib/config/ingest.js';
import { familyOf, parseDeliveryEvent, ROW_ENTITIES, SPEC_EVENT_FAMILIES } from '../../lib/events/index.js';
import { buildSampleBody, SAMPLE_EVENTS } from '../../tools/samples.js';

describe('the event registry', () => {
  it('has one family per event of the spec, each with a schema, an entity, a queue and a hook', () => {
    // The ten events of the spec's Events table, by their body names.
    expect(Object.keys(SPEC_EVENT_FAMILIES).sort()).toEqual(
      [
        'activity.changed',
        'activity.created',
        'activity.deleted',
        'contact.changed',
        'contact.created',
        'contact.deleted',
        'contact.softdeleted',
        'webhook.errors',
        'webhook.started',
        'webhook.stopped',
      ].sort(),
    );
    expect(ROW_ENTITIES).toEqual(['contact', 'activity']);
    for (const [name, family] of Object.entries(SPEC_EVENT_FAMILIES)) {
      expect(familyOf(name)).toBe(family);
      expect(family.queue).toBe(family.entity === 'webhook' ? 'webhookState' : family.entity);
    }
  });

  it('knows no event outside it, inherited names included', () => {
    for (const name of [
      'invoice.created',
      'contac.created',
      'list.created',
      'y_.created',
      'Y_TABLE.created',
      'y_equipment.softdeleted',
      'list.category.deleted',
      'toString',
      '__proto__',
      'constructor',
      'hasOwnProperty',
      '',
    ]) {
      expect(familyOf(name)).toBeUndefined();
    }
  });
});

describe('parseDeliveryEvent', () => {
  it('returns the valid body itself, equal to zod’s output', () => {
    for (const name of SAMPLE_EVENTS) {
      const body = { ...buildSampleBody(name), CustomProperty: { nested: [1, 'two'] } };
      const outcome = parseDeliveryEvent(body);
      expect(outcome).toEqual({ ok: true, event: z.parse(SPEC_EVENT_FAMILIES[name].schema, body) });
      expect(outcome.ok && outcome.event).toBe(body);
    }
  });

  it('explains a refused body with zod’s issues, and an event outside the spec as unknown', () => {
    const body = { ...buildSampleBody('contact.created'), PrimaryKey: 1.5 };
    expect(parseDeliveryEvent(body)).toEqual({
      ok: false,
      reason: 'invalid-event',
      detail: expect.stringContaining('PrimaryKey'),
    });
    const person = { ...buildSampleBody('contact.changed'), Event: 'invoice.created', Entity: 'invoice' };
    expect(parseDeliveryEvent(person)).toEqual({
      ok: false,
      reason: 'unknown-event',
      detail: 'event "invoice.created" is neither in the spec nor in the CRM catalogue',
    });
  });

  it('refuses non-objects and an envelope without its fields as invalid', () => {
    for (const body of [null, 1, 'x', [], {}, { Event: 'contact.created' }]) {
      expect(parseDeliveryEvent(body)).toMatchObject({ ok: false, reason: 'invalid-event' });
    }
  });

  it('refuses unsafe integers where the spec says integer', () => {
    for (const primaryKey of [2 ** 53, 1e21, Number.NaN, -0.5]) {
      const body = { ...buildSampleBody('contact.changed'), PrimaryKey: primaryKey };
      expect(parseDeliveryEvent(body)).toMatchObject({ ok: false, reason: 'invalid-event' });
    }
    expect(parseDeliveryEvent({ ...buildSampleBody('contact.changed'), PrimaryKey: 2 ** 53 - 1 }).ok).toBe(
      true,
    );
  });
});

describe('the catalogue families', () => {
  it.each(['person.created', 'sale.sold', 'list.category.created', 'y_equipment.created'])(
    '%s is valid with its own Entity and refused with another one, naming the one accepted',
    (name) => {
      const body = buildSampleBody(name);
      const entity = String(body.Entity);
      expect(parseDeliveryEvent(body)).toMatchObject({ ok: true });
      expect(parseDeliveryEvent({ ...body, Entity: 'contact' })).toEqual({
        ok: false,
        reason: 'invalid-event',
        detail: `Entity: must be "${entity}" for ${name}`,
      });
    },
  );
});

describe('the secrets JSON (WEBHOOK_SECRETS and the SSM parameter)', () => {
  it('takes an object of contexts to non-empty secrets, own keys only', () => {
    expect(parseSecretsJson('{"Cust1":["a","b"],"*":["c"]}', 'WEBHOOK_SECRETS')).toEqual({
      Cust1: ['a', 'b'],
      '*': ['c'],
    });
    expect(Object.keys(parseSecretsJson('{"__proto__":["x"],"A":["y"]}', 'WEBHOOK_SECRETS'))).toEqual(['A']);
  });

  it.each(['[]', '{"A":"s"}', '{"A":[""]}', '{"":["s"]}', '{"A":[1]}', 'null', 'nope'])(
    'refuses %s naming the variable, never the value',
    (json) => {
      expect(() => parseSecretsJson(json, 'WEBHOOK_SECRETS')).toThrow(
        'WEBHOOK_SECRETS must be a JSON object of ContextIdentifier to an array of secrets',
      );
    },
  );
});
