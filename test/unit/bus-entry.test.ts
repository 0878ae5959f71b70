import { describe, expect, it } from 'vitest';
import {
  type AppliedEvent,
  bookkeepingFilter,
  buildEntry,
  DEFAULT_BOOKKEEPING_FIELDS,
  entrySize,
  MAX_ENTRY_BYTES,
  type RowSnapshot,
  SOURCE,
} from '../../lib/bus/entry.js';
import { EntryTooLargeError } from '../../lib/bus/errors.js';
import { readBusConfig } from '../../lib/config/bus.js';
import { ConfigError } from '../../lib/config/env.js';
import { JsonText, objectMembers, stringifyExact } from '../../lib/json-text.js';
import { buildSampleBody } from '../../tools/samples.js';

const BIG = '9223372036854775807'; // a .NET long: JSON.parse would round it
const defaults = bookkeepingFilter(DEFAULT_BOOKKEEPING_FIELDS);

const row: RowSnapshot = {
  status: 'active',
  fieldValues: { name: 'Acme' },
  changedFields: ['department'],
  lastEventId: 'e1',
  lastTimestamp: '2024-05-01T10:00:00.1234567Z',
};

/** A contact.changed body as text, with the given Changes and extra top-level JSON appended verbatim. */
function changedBody(changes: string[], extra = ''): string {
  const body = JSON.stringify(buildSampleBody('contact.changed', { primaryKey: 42 }));
  const withChanges = body.replace(/"Changes":\[[^\]]*\]/, `"Changes":${JSON.stringify(changes)}`);
  return extra === '' ? withChanges : `${withChanges.slice(0, -1)},${extra}}`;
}

function applied(body: string, overrides: Partial<AppliedEvent> = {}): AppliedEvent {
  return {
    body,
    seq: '2024-05-01T10:00:00.1234567Z#e1',
    outcome: 'applied',
    echo: false,
    row,
    ...overrides,
  } as AppliedEvent;
}

describe('raw JSON', () => {
  it('splits an object into its members with their exact text, the last of a repeated key winning', () => {
    const members = objectMembers(
      `{ "A" : ${BIG}, "B": {"s": "}\\"{", "n": [1, {"x": 2}]}, "A": 1.50, "C": "x" }`,
    );
    expect([...members]).toEqual([
      ['B', '{"s": "}\\"{", "n": [1, {"x": 2}]}'],
      ['A', '1.50'],
      ['C', '"x"'],
    ]);
    expect(() => objectMembers('[1]')).toThrow(SyntaxError);
    expect(() => objectMembers('{"a": }')).toThrow(SyntaxError);
  });

  it('writes raw values verbatim at any depth and leaves out undefined properties', () => {
    expect(
      stringifyExact({ a: new JsonText(BIG), b: [new JsonText('1.50'), null], c: undefined, d: 'x' }),
    ).toBe(`{"a":${BIG},"b":[1.50,null],"d":"x"}`);
  });
});

describe('buildEntry', () => {
  it('publishes the delivered fields as delivered, with significantChanges, seq, outcome, echo and row', () => {
    const body = changedBody(['department', 'updated', 'updated_associate_id', 'dbi_last_modified', 'name']);
    const entry = buildEntry(applied(body), defaults);
    expect(entry.Source).toBe(SOURCE);
    expect(entry.DetailType).toBe('contact.changed');
    const detail = JSON.parse(entry.Detail);
    expect(detail).toEqual({
      ...JSON.parse(body),
      significantChanges: ['department', 'name'],
      seq: '2024-05-01T10:00:00.1234567Z#e1',
      outcome: 'applied',
      echo: false,
      row,
    });
  });

  it('keeps the digits of numbers JSON.parse cannot hold, in the body and in a raw row', () => {
    const body = changedBody(['x'], `"FieldValues":{"big":${BIG},"price":1.50},"Custom":${BIG}`);
    const entry = buildEntry(
      applied(body, { row: { ...row, fieldValues: new JsonText(`{"big":${BIG}}`) } }),
      defaults,
    );
    expect(entry.Detail).toContain(`"FieldValues":{"big":${BIG},"price":1.50}`);
    expect(entry.Detail).toContain(`"Custom":${BIG}`);
    expect(entry.Detail).toContain(`"fieldValues":{"big":${BIG}}`);
  });

  it('carries a webhook instead of a row for state events, with the open gap', () => {
    const body = JSON.stringify(buildSampleBody('webhook.stopped'));
    const webhook = {
      state: 1,
      stateName: 'Stopped',
      gap: { openedAt: '2024-05-01T09:00:00Z', openedByEventId: 'e0' },
    };
    const event: AppliedEvent = { body, seq: 's', outcome: 'late', echo: false, webhook };
    const detail = JSON.parse(buildEntry(event, defaults).Detail);
    expect(detail.webhook).toEqual(webhook);
    expect(detail).not.toHaveProperty('row');
    expect(detail.significantChanges).toEqual([]);
  });

  it('uses the BOOKKEEPING_FIELDS list instead of the default one, prefixes included', () => {
    const config = readBusConfig({ BOOKKEEPING_FIELDS: 'name, x_*' });
    const body = changedBody(['name', 'x_a', 'updated', 'department']);
    const detail = JSON.parse(buildEntry(applied(body), bookkeepingFilter(config.bookkeepingFields)).Detail);
    expect(detail.significantChanges).toEqual(['updated', 'department']);
  });

  it('drops FieldValues, Values, custom properties and row.fieldValues from an entry over 256 KB', () => {
    const values = JSON.stringify({ text: 'é'.repeat(70_000) }); // 140 KB of UTF-8 in 70,000 characters
    const body = changedBody(['department'], `"FieldValues":${values},"Values":${values},"Custom":1`);
    const full = buildEntry(applied(body), defaults);
    expect(full.Detail.length).toBeLessThan(MAX_ENTRY_BYTES); // it is the UTF-8 size that is over
    const detail = JSON.parse(full.Detail);
    expect(detail.truncated).toBe(true);
    expect(detail).not.toHaveProperty('FieldValues');
    expect(detail).not.toHaveProperty('Values');
    expect(detail).not.toHaveProperty('Custom');
    expect(detail.row).toEqual({ ...row, fieldValues: undefined });
    expect(detail.PrimaryKey).toBe(42);
    expect(detail.significantChanges).toEqual(['department']);
    expect(entrySize(full)).toBeLessThanOrEqual(MAX_ENTRY_BYTES);
  });

  it('publishes an entry of exactly 256 KB whole, and refuses one still too large once truncated', () => {
    const small = buildEntry(applied(changedBody(['a'], '"Pad":""')), defaults);
    const pad = 'x'.repeat(MAX_ENTRY_BYTES - entrySize(small));
    const exact = buildEntry(applied(changedBody(['a'], `"Pad":"${pad}"`)), defaults);
    expect(entrySize(exact)).toBe(MAX_ENTRY_BYTES);
    expect(JSON.parse(exact.Detail)).not.toHaveProperty('truncated');

    const huge = changedBody(Array.from({ length: 30_000 }, (_, i) => `field_${i}`));
    expect(() => buildEntry(applied(huge), defaults)).toThrow(EntryTooLargeError);
  });

  it('counts an entry as EventBridge does: UTF-8 bytes of Source, DetailType, Detail, Resources, 14 for Time', () => {
    expect(entrySize({ Source: 'ab', DetailType: 'é', Detail: '{}' })).toBe(2 + 2 + 2);
    expect(
      entrySize({ Source: 'a', DetailType: 'b', Detail: '{}', Resources: ['arn:x'], Time: new Date() }),
    ).toBe(1 + 1 + 2 + 5 + 14);
  });
});

describe('readBusConfig', () => {
  it('publishes nothing by default, and needs EVENT_BUS_NAME to publish', () => {
    expect(readBusConfig({})).toEqual({
      eventBusName: undefined,
      publish: false,
      publishEchoes: false,
      bookkeepingFields: DEFAULT_BOOKKEEPING_FIELDS,
    });
    expect(() => readBusConfig({ PUBLISH_EVENTS: 'true' })).toThrow(ConfigError);
    expect(
      readBusConfig({ PUBLISH_EVENTS: 'true', EVENT_BUS_NAME: 'bus', PUBLISH_ECHOES: 'true' }),
    ).toMatchObject({
      eventBusName: 'bus',
      publish: true,
      publishEchoes: true,
    });
  });
});
