import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../lib/config/env.js';
import { parseSecretsJson, readIngestConfig, secretConfig } from '../../lib/config/ingest.js';

const QUEUES = {
  CONTACT_QUEUE_URL: 'http://q/contact.fifo',
  ACTIVITY_QUEUE_URL: 'http://q/activity.fifo',
  WEBHOOK_STATE_QUEUE_URL: 'http://q/state.fifo',
  ENTITIES_QUEUE_URL: 'http://q/entities.fifo',
  PARKED_QUEUE_URL: 'http://q/parked.fifo',
};

describe('readIngestConfig', () => {
  it('reads the defaults of the spec-silent limits', () => {
    const config = readIngestConfig({ ...QUEUES });
    expect(config).toMatchObject({
      allowUnsigned: false,
      maxEventAgeSeconds: 604_800,
      maxBodyBytes: 1_048_576,
      headerPrefix: undefined,
      stateEventToken: undefined,
      secrets: { fallback: [], byContext: {} },
    });
  });

  it('splits WEBHOOK_SECRET on commas and lets WEBHOOK_SECRETS override per context', () => {
    const config = readIngestConfig({
      ...QUEUES,
      WEBHOOK_SECRET: ' old , new ,',
      WEBHOOK_SECRETS: '{"Cust1":["c1a","c1b"]}',
    });
    expect(config.secrets).toEqual({ fallback: ['old', 'new'], byContext: { Cust1: ['c1a', 'c1b'] } });
  });

  it('names the missing variable', () => {
    const { PARKED_QUEUE_URL: _, ...rest } = QUEUES;
    expect(() => readIngestConfig(rest)).toThrow(
      new ConfigError('PARKED_QUEUE_URL must be set', 'PARKED_QUEUE_URL'),
    );
  });

  it.each([
    ['ALLOW_UNSIGNED', 'yes', 'ALLOW_UNSIGNED must be true or false'],
    ['MAX_EVENT_AGE_SECONDS', '-1', 'MAX_EVENT_AGE_SECONDS must be a positive integer'],
    ['MAX_BODY_BYTES', '1.5', 'MAX_BODY_BYTES must be a positive integer'],
  ])('refuses %s=%s', (name, value, message) => {
    expect(() => readIngestConfig({ ...QUEUES, [name]: value })).toThrow(message);
  });

  it.each(['SuperOffice', 'X-SuperOffice-Event', 'X-Super Office', 'X-'])(
    'refuses HEADER_PREFIX=%s in one line',
    (value) => {
      expect(() => readIngestConfig({ ...QUEUES, HEADER_PREFIX: value })).toThrow(
        new ConfigError(
          'HEADER_PREFIX must be the prefix of the delivery headers, starting with X- (for example X-SuperOffice for X-SuperOffice-Event)',
          'HEADER_PREFIX',
        ),
      );
    },
  );

  it.each(['X-SuperOffice', 'x-superoffice', 'X-Service-'])('accepts HEADER_PREFIX=%s', (value) => {
    expect(readIngestConfig({ ...QUEUES, HEADER_PREFIX: value }).headerPrefix).toBe(value);
  });
});

describe('parseSecretsJson', () => {
  it.each([
    ['not JSON', '{"Cust1":["supersecret"'],
    ['not an object of arrays', '{"Cust1":"supersecret"}'],
    ['an empty secret', '{"Cust1":[""]}'],
  ])('refuses %s without echoing the value', (_label, json) => {
    const error = (() => {
      try {
        parseSecretsJson(json, 'WEBHOOK_SECRETS');
      } catch (e) {
        return e as Error;
      }
      throw new Error('expected a ConfigError');
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).not.toContain('supersecret');
    expect(error.message).toContain('WEBHOOK_SECRETS');
  });

  it('returns the contexts and their secrets, without a "__proto__" key (as zod leaves it out)', () => {
    const parsed = parseSecretsJson('{"__proto__":[5],"Cust1":["a","b"],"*":["c"]}', 'WEBHOOK_SECRETS');
    expect(parsed).toEqual({ Cust1: ['a', 'b'], '*': ['c'] });
    expect(Object.hasOwn(parsed, '__proto__')).toBe(false);
  });
});

describe('secretConfig', () => {
  it('uses the "*" entry as the fallback for every other context', () => {
    expect(secretConfig(['env'], { '*': ['star'], Cust1: ['c1'] })).toEqual({
      fallback: ['star'],
      byContext: { Cust1: ['c1'] },
    });
    expect(secretConfig(['env'], { Cust1: ['c1'] })).toEqual({
      fallback: ['env'],
      byContext: { Cust1: ['c1'] },
    });
  });
});

describe('ENTITIES', () => {
  it('stores every entity when unset or blank', () => {
    expect(readIngestConfig({ ...QUEUES }).entities).toBeUndefined();
    expect(readIngestConfig({ ...QUEUES, ENTITIES: ' ' }).entities).toBeUndefined();
  });

  it('takes fixed entities, one list or table, and the list.*, y_* and * patterns', () => {
    const entities = readIngestConfig({ ...QUEUES, ENTITIES: 'contact, activity,list.*,y_equipment' })
      .entities!;
    const chosen = [
      'contact',
      'activity',
      'person',
      'list.category',
      'list.42',
      'y_equipment',
      'y_other',
    ].filter((entity) => entities(entity));
    expect(chosen).toEqual(['contact', 'activity', 'list.category', 'list.42', 'y_equipment']);
    expect(readIngestConfig({ ...QUEUES, ENTITIES: 'y_*' }).entities!('y_other')).toBe(true);
    expect(readIngestConfig({ ...QUEUES, ENTITIES: '*' }).entities!('sale')).toBe(true);
  });

  it.each([
    ['contac', 'contac'],
    ['webhook', 'webhook'],
    ['list', 'list'],
    ['Y_TABLE', 'Y_TABLE'],
    ['person.*', 'person.*'],
    ['contact,invoice', 'invoice'],
  ])('refuses ENTITIES=%s in one line naming %s and what is accepted', (value, entry) => {
    expect(() => readIngestConfig({ ...QUEUES, ENTITIES: value })).toThrow(
      new RegExp(
        `^ENTITIES: "${entry.replace(/[.*]/g, '\\$&')}" is not an entity; ENTITIES must be a comma-separated list of contact, activity, .*, list\\.<name>, y_<table>, list\\.\\*, y_\\* or \\*$`,
      ),
    );
  });
});
