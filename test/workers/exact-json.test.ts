import { describe, expect, it } from 'vitest';
import { toEventView, toRowView } from '../../dashboard/views.js';
import { JsonText, jsonMembers, stringifyExact } from '../../lib/json-text.js';
import { dynamoStoreForFile } from '../support/dynamo.js';
import { at, contactWorker, lambdaContext, rowEvent, sqsEvent, sqsRecord } from '../support/workers.js';

const db = dynamoStoreForFile();

const worker = () => contactWorker(db.store);

/** A contact.created delivery whose raw text carries `extra` inside FieldValues or at the top level. */
function delivery(primaryKey: number, where: 'FieldValues' | 'top', extra: string) {
  const event = rowEvent('contact.created', { context: 'CustExact', primaryKey, timestamp: at(1) });
  const text = JSON.stringify(event);
  const raw =
    where === 'FieldValues'
      ? text.replace('"FieldValues":{', `"FieldValues":{"extra":${extra},`)
      : text.replace(/}$/, `,"Custom":${extra}}`);
  return { event, raw };
}

const deep = (levels: number) => `${'['.repeat(levels)}1${']'.repeat(levels)}`;

const cases = [
  ['an integer above 2^53 in FieldValues', 1, 'FieldValues', '9223372036854775807'],
  ['a number below 1e-130 in FieldValues', 2, 'FieldValues', '1e-200'],
  ['a value nested 5,000 levels in FieldValues', 3, 'FieldValues', deep(5000)],
  ['a custom top-level property nested 5,000 levels', 4, 'top', deep(5000)],
  ['an exact decimal with trailing digits', 5, 'FieldValues', '0.10000000000000000000000001'],
] as const;

describe('every accepted delivery is stored, with its exact digits', () => {
  it.each(cases)('%s', async (_name, primaryKey, where, extra) => {
    const { event, raw } = delivery(primaryKey, where, extra);

    const response = await worker()(sqsEvent([sqsRecord(event, { raw })]), lambdaContext);

    expect(response.batchItemFailures).toEqual([]);
    const row = await db.store.getRow('CustExact', 'contact', primaryKey);
    expect(row?.lastEventId).toBe(event.EventId);
    const history = await db.store.listRowEvents('CustExact', 'contact', primaryKey);
    expect(history).toHaveLength(1);
    expect(history[0]!.body).toBe(raw);
    // the admin API's history answer carries the body as received
    expect(stringifyExact(history.map(toEventView), 2)).toContain(`"payload": ${raw}`);
    if (where === 'FieldValues') {
      // the row, and the admin API's answer, carry the exact text of the delivered FieldValues
      expect(stringifyExact(toRowView(row!))).toContain(`"extra":${extra}`);
    }
  });
});

describe('JSON text helpers', () => {
  it('jsonMembers finds exact member texts, the last duplicate winning, strings with brackets skipped', () => {
    const text =
      ' { "a" : "x}\\"]" , "FieldValues" : {"n":1} ,"Values":[1e-200, {"b":"]"}],"FieldValues":{"n":9223372036854775807}}';
    expect(jsonMembers(text, ['FieldValues', 'Values', 'a'])).toEqual({
      a: '"x}\\"]"',
      FieldValues: '{"n":9223372036854775807}',
      Values: '[1e-200, {"b":"]"}]',
    });
  });

  it('stringifyExact splices JsonText verbatim and leaves everything else to JSON.stringify', () => {
    const value = { a: new JsonText('9223372036854775807'), b: ['\u0000x'], c: 1 };
    expect(stringifyExact(value)).toBe('{"a":9223372036854775807,"b":["\\u0000x"],"c":1}');
    expect(JSON.stringify(value)).toBe('{"a":9223372036854776000,"b":["\\u0000x"],"c":1}');
  });

  it('stringifyExact writes what JSON.stringify writes, indented or not, when there is no JsonText', () => {
    const values: unknown[] = [
      { a: 1, b: [], c: {}, d: [1, { e: null, f: undefined }, undefined], g: 'x"\n', h: new Date(0) },
      [[[]], {}, -0, 1e21, true],
      'plain',
      null,
    ];
    for (const value of values) {
      for (const space of [undefined, 2, 4]) {
        expect(stringifyExact(value, space)).toBe(JSON.stringify(value, null, space));
      }
    }
  });

  it('stringifyExact indents around a JsonText without re-indenting its text', () => {
    const value = { row: { fieldValues: new JsonText('{"n":1e-200,"m":[1,2]}') }, list: [new JsonText('7')] };
    expect(stringifyExact(value, 2)).toBe(
      '{\n  "row": {\n    "fieldValues": {"n":1e-200,"m":[1,2]}\n  },\n  "list": [\n    7\n  ]\n}',
    );
  });
});
