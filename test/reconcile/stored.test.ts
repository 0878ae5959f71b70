import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Row } from '../../lib/model/types.js';
import { learnedShape } from '../../lib/reconcile/run/fields.js';
import { createStoredRows } from '../../lib/store/index.js';
import { toRowItem } from '../../lib/store/row-item.js';
import { type LocalDynamo, startDynalite } from '../support/dynamo.js';
import { storedRow } from '../support/old-rows.js';

let dynamo: LocalDynamo;
let rows: string;

beforeAll(async () => {
  dynamo = await startDynalite();
  ({ rows } = await dynamo.createTables());
});
afterAll(() => dynamo.close());

/** A stored row item as the workers write it (toRowItem), with `status`. */
async function put(context: string, entity: 'contact' | 'person', primaryKey: number, status = 'active') {
  const item = toRowItem({ ...storedRow(context, primaryKey, entity), status } as Row, 1);
  await dynamo.doc.send(new PutCommand({ TableName: rows, Item: item }));
}

describe('the stored rows of a (context, entity), through the rows table’s byRowSet index (dynalite)', () => {
  it('lists the primary keys of one context and entity in (after, upTo], ascending, and says whether there is any', async () => {
    for (const pk of [5, 1, 12, 7, 3]) await put('CustS', 'contact', pk);
    await put('CustS', 'person', 4);
    await put('CustSX', 'contact', 2); // another context
    await put('CustS', 'contact', 9, 'deleted');
    const stored = createStoredRows({ client: dynamo.doc, table: rows });

    expect(await stored.keys('CustS', 'contact', undefined, undefined)).toEqual([1, 3, 5, 7, 9, 12]);
    expect(await stored.keys('CustS', 'contact', 3, 9)).toEqual([5, 7, 9]);
    expect(await stored.keys('CustS', 'contact', undefined, 5)).toEqual([1, 3, 5]);
    expect(await stored.keys('CustS', 'contact', 7, undefined)).toEqual([9, 12]);
    expect(await stored.keys('CustS', 'contact', 9, 9)).toEqual([]);
    expect(await stored.keys('CustS', 'person', undefined, undefined)).toEqual([4]);
    expect(await stored.hasAny('CustS', 'contact')).toBe(true);
    expect(await stored.hasAny('CustS', 'sale')).toBe(false);
    expect(await stored.status('CustS', 'contact', 9)).toBe('deleted');
    expect(await stored.status('CustS', 'contact', 5)).toBe('active');
    expect(await stored.status('CustS', 'contact', 6)).toBeUndefined();
  });

  it('reads the stored rows of a page by primary key: a row not stored, or one that cannot be read, is left out (a count never fails a run)', async () => {
    await put('CustR', 'contact', 1);
    await put('CustR', 'contact', 2);
    // A row item the store cannot read (its status is no status).
    const broken = toRowItem({ ...storedRow('CustR', 3, 'contact'), status: 'active' } as Row, 1);
    await dynamo.doc.send(new PutCommand({ TableName: rows, Item: { ...broken, status: 42 } }));
    const stored = createStoredRows({ client: dynamo.doc, table: rows });

    const found = await stored.rows('CustR', 'contact', [1, 2, 3, 4]);
    expect([...found.keys()].sort()).toEqual([1, 2]);
    expect(found.get(2)).toMatchObject({
      row: { context: 'CustR', entity: 'contact', primaryKey: 2, status: 'active' },
      version: 1,
    });
  });

  it('learns a list’s or custom table’s fields from the FieldValues of the stored rows that have them', async () => {
    const put = async (entity: string, primaryKey: number, fieldValues?: Record<string, unknown>) => {
      const row = { ...storedRow('CustF', primaryKey), entity, ...(fieldValues && { fieldValues }) };
      await dynamo.doc.send(new PutCommand({ TableName: rows, Item: toRowItem(row as Row, 1) }));
    };
    // The lowest key has no FieldValues (a row known only from a deleted event's Values): the next one is read.
    await put('y_tool', 1);
    await put('y_tool', 2, { id: '[I:2]', x_size: '[F:1.5]' });
    await put('y_tool', 3, { id: '[I:3]', x_other: '[S:x]' });
    await put('list.colour', 4);
    const stored = createStoredRows({ client: dynamo.doc, table: rows });

    expect(await stored.sampleFieldValues('CustF', 'y_tool')).toEqual({
      id: '[I:3]',
      x_other: '[S:x]',
      x_size: '[F:1.5]',
    });
    expect(await stored.sampleFieldValues('CustF', 'list.colour')).toBeUndefined();
    expect(await stored.sampleFieldValues('CustF', 'y_none')).toBeUndefined();
    expect(await stored.sampleFieldValues('CustOther', 'y_tool')).toBeUndefined();
  });

  it('learns the fields of the newest stored rows, each typed as a row with a value writes it: a column added later, a null in the newest row', async () => {
    const put = async (primaryKey: number, fieldValues: Record<string, unknown>) => {
      const row = { ...storedRow('CustN', primaryKey), entity: 'y_kit', fieldValues };
      await dynamo.doc.send(new PutCommand({ TableName: rows, Item: toRowItem(row as Row, 1) }));
    };
    // Row 1 was delivered before the tenant added x_new; row 12's x_size is empty.
    await put(1, { id: '[I:1]', x_size: '[F:1.5]' });
    for (let key = 2; key <= 11; key++) await put(key, { id: `[I:${key}]`, x_size: '[F:2]', x_new: '[I:7]' });
    await put(12, { id: '[I:12]', x_size: null, x_new: '[I:8]' });
    const stored = createStoredRows({ client: dynamo.doc, table: rows });

    const sample = await stored.sampleFieldValues('CustN', 'y_kit');
    // A snapshot in this shape writes x_new (else every row that has it would look changed and lose
    // it) and x_size as [F:...] (else a number, unequal to the stored rows' text).
    expect(sample).toEqual({ id: '[I:12]', x_size: '[F:2]', x_new: '[I:8]' });
    expect(learnedShape(sample!)).toMatchObject({
      fields: ['id', 'x_size', 'x_new'],
      tags: { id: 'I', x_size: 'F', x_new: 'I' },
    });
  });

  it('says in one line that a rows table from before the index cannot find deletes, and what to do', async () => {
    const old = `${rows}-old`;
    await dynamo.client.send(
      new CreateTableCommand({
        TableName: old,
        AttributeDefinitions: [{ AttributeName: 'rowKey', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'rowKey', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    const stored = createStoredRows({ client: dynamo.doc, table: old });
    await expect(stored.hasAny('CustS', 'contact')).rejects.toThrow(
      `the ${old} table has no byRowSet index, which reconciliation needs to find deleted rows: deploy the stack again (it adds it), or locally start with a fresh DATA_DIR`,
    );
  });
});
