import { describe, expect, it } from 'vitest';
import { AddedDetailSchema } from '../../lib/bus/detail-schema.js';
import {
  type AppliedEvent,
  bookkeepingFilter,
  buildEntry,
  DEFAULT_BOOKKEEPING_FIELDS,
  DROPPED_WHEN_TRUNCATED,
  entrySize,
  MAX_CHANGES_BYTES,
  MAX_DETAIL_DEPTH,
  MAX_ENTRY_BYTES,
  type RowSnapshot,
  SOURCE,
} from '../../lib/bus/entry.js';
import { EntryTooLargeError } from '../../lib/bus/errors.js';
import { nestingDepth } from '../../lib/bus/limits.js';
import { readBusConfig } from '../../lib/config/bus.js';
import { ConfigError } from '../../lib/config/env.js';
import { validEvent } from '../../lib/events/index.js';
import { storeMisfit } from '../../lib/ingest/store-fit.js';
import { JsonText, objectMembers, stringifyExact } from '../../lib/json-text.js';
import { MAX_PARTITION_KEY_BYTES } from '../../lib/store/keys.js';
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

  it('adds to the delivered fields only what AddedDetailSchema (the shape subscriptions are checked against) says, a truncated entry’s too', () => {
    const values = JSON.stringify({ text: 'é'.repeat(70_000) });
    const webhook = { state: 1, stateName: 'Stopped', gap: { openedAt: 'a', openedByEventId: 'e0' } };
    const bodies = [changedBody(['name']), changedBody(['x'], `"FieldValues":${values},"Values":${values}`)];
    const events = [
      ...bodies.map((body) => applied(body)),
      { ...applied(JSON.stringify(buildSampleBody('webhook.stopped'))), row: undefined, webhook },
    ] as AppliedEvent[];
    for (const event of events) {
      const detail = JSON.parse(buildEntry(event, defaults).Detail) as Record<string, unknown>;
      const added = Object.fromEntries(
        Object.entries(detail).filter(([field]) => !Object.hasOwn(JSON.parse(event.body), field)),
      );
      expect(Object.keys(added).every((field) => Object.hasOwn(AddedDetailSchema.shape, field))).toBe(true);
      expect(AddedDetailSchema.parse(added)).toEqual(added);
    }
  });

  it('leaves parts out in order until the entry fits 256 KB, and names them (truncated, dropped)', () => {
    const values = JSON.stringify({ text: 'é'.repeat(70_000) }); // 140 KB of UTF-8 in 70,000 characters
    const body = changedBody(['department'], `"FieldValues":${values},"Values":${values},"Custom":1`);
    const entry = buildEntry(applied(body), defaults);
    expect(entry.Detail.length).toBeLessThan(MAX_ENTRY_BYTES); // it is the UTF-8 size that is over
    const detail = JSON.parse(entry.Detail);
    expect(detail).toMatchObject({ truncated: true, PrimaryKey: 42, significantChanges: ['department'] });
    // Left out in DROPPED_WHEN_TRUNCATED's order until it fits: Values and Custom could stay.
    expect(detail.dropped).toEqual(['row.changedFields', 'row.fieldValues', 'FieldValues']);
    expect(DROPPED_WHEN_TRUNCATED.slice(0, 3)).toEqual(detail.dropped);
    expect(detail).not.toHaveProperty('FieldValues');
    expect(detail.Values).toEqual(JSON.parse(values));
    expect(detail.Custom).toBe(1);
    expect(detail.row).toEqual({ status: 'active', lastEventId: 'e1', lastTimestamp: row.lastTimestamp });
    expect(entrySize(entry)).toBeLessThanOrEqual(MAX_ENTRY_BYTES);
  });

  it('never publishes a delivered truncated or dropped: an entry that fits is not marked truncated', () => {
    const forged = changedBody(['a'], '"truncated":true,"dropped":["Changes"]');

    const detail = JSON.parse(buildEntry(applied(forged), defaults).Detail);

    expect(detail).not.toHaveProperty('truncated');
    expect(detail).not.toHaveProperty('dropped');
    expect(detail.Changes).toEqual(['a']);
  });

  it('publishes an entry of exactly 256 KB whole', () => {
    const small = buildEntry(applied(changedBody(['a'], '"Pad":""')), defaults);
    const pad = 'x'.repeat(MAX_ENTRY_BYTES - entrySize(small));
    const exact = buildEntry(applied(changedBody(['a'], `"Pad":"${pad}"`)), defaults);
    expect(entrySize(exact)).toBe(MAX_ENTRY_BYTES);
    expect(JSON.parse(exact.Detail)).not.toHaveProperty('truncated');
  });

  it('publishes a change naming 6,000 fields (114 KB) without the row’s list of them, Changes kept', () => {
    const fields = Array.from({ length: 6000 }, (_, i) => `custom_field_${String(i).padStart(4, '0')}`);
    const body = changedBody(fields);
    expect(Buffer.byteLength(body)).toBeGreaterThan(114_000);

    const entry = buildEntry(applied(body, { row: { ...row, changedFields: [...fields].sort() } }), defaults);

    const detail = JSON.parse(entry.Detail);
    expect(entrySize(entry)).toBeLessThanOrEqual(MAX_ENTRY_BYTES);
    expect(detail).toMatchObject({ truncated: true, dropped: ['row.changedFields'] });
    expect(detail.Changes).toEqual(fields);
    expect(detail.significantChanges).toEqual(fields);
    expect(detail.row).toEqual({ ...row, changedFields: undefined });
  });

  it('leaves out FieldValues nested deeper than PutEvents processes (9,000 arrays), Changes kept', () => {
    const deep = `${'['.repeat(9000)}1${']'.repeat(9000)}`;
    const body = changedBody(['name'], `"FieldValues":{"name":${deep}}`);
    const deepRow = { ...row, fieldValues: new JsonText(`{"name":${deep}}`) };

    const entry = buildEntry(applied(body, { row: deepRow }), defaults);

    expect(nestingDepth(entry.Detail)).toBeLessThanOrEqual(MAX_DETAIL_DEPTH);
    const detail = JSON.parse(entry.Detail);
    expect(detail).toMatchObject({
      truncated: true,
      dropped: ['row.changedFields', 'row.fieldValues', 'FieldValues'],
    });
    expect(detail).not.toHaveProperty('FieldValues');
    expect(detail.Changes).toEqual(['name']);
  });

  it('keeps a Detail nested exactly as deep as PutEvents processes', () => {
    const levels = MAX_DETAIL_DEPTH - 1; // under the Detail object itself
    const deep = `${'['.repeat(levels)}1${']'.repeat(levels)}`;

    const entry = buildEntry(applied(changedBody(['a'], `"Deep":${deep}`)), defaults);

    expect(nestingDepth(entry.Detail)).toBe(MAX_DETAIL_DEPTH);
    expect(JSON.parse(entry.Detail)).not.toHaveProperty('truncated');
  });

  it('measures nesting from brackets outside strings only', () => {
    expect(nestingDepth('{"a":[1,"]]["],"b":{"c":"\\"}}')).toBe(2);
    expect(nestingDepth('"[[["')).toBe(0);
  });

  it('keeps Changes and significantChanges for the largest delivery the ingest accepts', () => {
    // Changes of exactly MAX_CHANGES_BYTES, none of them bookkeeping; a ContextIdentifier at the key
    // limit in control characters (6 bytes each in JSON); everything droppable present and large.
    const name = (i: number) => `f${String(i).padStart(12, '0')}`; // 16 bytes with quotes and comma
    const fields = Array.from({ length: Math.floor(MAX_CHANGES_BYTES / 16) - 1 }, (_, i) => name(i));
    const rest = MAX_CHANGES_BYTES - Buffer.byteLength(JSON.stringify(fields));
    fields.push('x'.repeat(rest - 3));
    expect(Buffer.byteLength(JSON.stringify(fields))).toBe(MAX_CHANGES_BYTES);
    const context = '\u0001'.repeat(MAX_PARTITION_KEY_BYTES - 'contact#42#'.length);
    const sample = JSON.parse(changedBody([]));
    const body = JSON.stringify({
      ...sample,
      ContextIdentifier: context,
      Changes: fields,
      WebhookName: 'w'.repeat(10_000),
      Custom: 'c'.repeat(10_000),
    });
    const delivery = validEvent(JSON.parse(body));
    expect(delivery && storeMisfit(delivery, body)).toBeUndefined(); // the ingest routes it
    const event = applied(body, {
      row: { ...row, changedFields: fields, fieldValues: { big: 'v'.repeat(50_000) } },
    });

    const entry = buildEntry(event, defaults);

    const detail = JSON.parse(entry.Detail);
    expect(entrySize(entry)).toBeLessThanOrEqual(MAX_ENTRY_BYTES);
    expect(detail.dropped).toEqual([
      'row.changedFields',
      'row.fieldValues',
      'customProperties',
      'WebhookName',
    ]);
    expect(detail.Changes).toEqual(fields);
    expect(detail.significantChanges).toEqual(fields);
    expect(detail.ContextIdentifier).toBe(context);
  });

  it('leaves out significantChanges, then Changes, only for a delivery over MAX_CHANGES_BYTES (queued before the limit)', () => {
    const fields = Array.from({ length: 20_000 }, (_, i) => `field_${i}`);

    const detail = JSON.parse(buildEntry(applied(changedBody(fields)), defaults).Detail);

    expect(detail.dropped).toEqual([
      'row.changedFields',
      'row.fieldValues',
      'WebhookName',
      'significantChanges',
      'Changes',
    ]);
    expect(detail).not.toHaveProperty('Changes');
    expect(detail).toMatchObject({ truncated: true, PrimaryKey: 42, Event: 'contact.changed' });
  });

  it('writes the envelope by value once truncated, so padding in its text does not count', () => {
    const padded = changedBody(['a']).replace('"PrimaryKey":42', `"PrimaryKey":42.${'0'.repeat(300_000)}`);

    const detail = JSON.parse(buildEntry(applied(padded), defaults).Detail);

    expect(detail).toMatchObject({ PrimaryKey: 42, Changes: ['a'], truncated: true });
  });

  it('refuses an entry whose envelope alone is over 256 KB (the ingest never accepts one)', () => {
    const huge = JSON.stringify({
      ...JSON.parse(changedBody(['a'])),
      ContextIdentifier: 'C'.repeat(300_000),
    });
    expect(() => buildEntry(applied(huge), defaults)).toThrow(EntryTooLargeError);
  });

  it.each(['constructor', 'toString', 'valueOf', '__proto__', 'hasOwnProperty', '__defineGetter__'])(
    'carries "%s" as a field name like any other: in Changes, significantChanges and as a custom property',
    (name) => {
      const custom = `${JSON.stringify(name)}:{"kept":1}`;
      const full = JSON.parse(buildEntry(applied(changedBody([name, 'updated']), {}), defaults).Detail);
      const withCustom = buildEntry(applied(changedBody([name], custom)), defaults).Detail;
      const big = `${JSON.stringify(name)}:"${'x'.repeat(MAX_ENTRY_BYTES)}","Other":1`;
      const truncated = JSON.parse(buildEntry(applied(changedBody([name], big)), defaults).Detail);

      expect(full).toMatchObject({ Changes: [name, 'updated'], significantChanges: [name] });
      expect(withCustom).toContain(`${JSON.stringify(name)}:{"kept":1}`);
      expect(Object.keys(truncated)).not.toContain(name);
      expect(truncated).not.toHaveProperty('Other');
      expect(truncated).toMatchObject({
        dropped: ['row.changedFields', 'row.fieldValues', 'customProperties'],
      });
      expect(truncated.Changes).toEqual([name]);
    },
  );

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
      publishDetailTypes: [],
    });
    expect(readBusConfig({ PUBLISH_DETAIL_TYPES: 'contact.changed, sale.sold' }).publishDetailTypes).toEqual([
      'contact.changed',
      'sale.sold',
    ]);
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
