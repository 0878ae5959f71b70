import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillRowIndex, createStoredRows, rowKey } from '../../lib/store/index.js';
import { toRowItem } from '../../lib/store/row-item.js';
import { FAKE_AWS_ENV, type LocalDynamo, startDynalite } from '../support/dynamo.js';
import { putOldRow, storedRow } from '../support/old-rows.js';

let dynamo: LocalDynamo;

beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(() => dynamo.close());

async function getItem(table: string, context: string, primaryKey: number) {
  const { Item } = await dynamo.doc.send(
    new GetCommand({ TableName: table, Key: { rowKey: rowKey(context, 'contact', primaryKey) } }),
  );
  return Item;
}

describe('backfillRowIndex: rows stored before the byRowSet index get its keys (dynalite)', () => {
  it('makes old rows visible to a reconcile’s stored keys, leaves indexed ones alone, and a second run changes nothing', async () => {
    const { rows } = await dynamo.createTables();
    for (const pk of [3, 1, 2]) await putOldRow(dynamo, rows, 'Cust#A', pk);
    await putOldRow(dynamo, rows, 'Cust#A', 7, 'person');
    await dynamo.doc.send(new PutCommand({ TableName: rows, Item: toRowItem(storedRow('Cust#A', 9), 1) }));
    const stored = createStoredRows({ client: dynamo.doc, table: rows });
    expect(await stored.keys('Cust#A', 'contact', undefined, undefined)).toEqual([9]);

    const progress: number[] = [];
    const first = await backfillRowIndex({
      client: dynamo.doc,
      table: rows,
      segments: 2,
      onProgress: (counts) => progress.push(counts.scanned),
    });

    expect(first).toEqual({ scanned: 5, updated: 4, alreadyIndexed: 1 });
    expect(progress.at(-1)).toBe(5);
    expect(await stored.keys('Cust#A', 'contact', undefined, undefined)).toEqual([1, 2, 3, 9]);
    expect(await stored.keys('Cust#A', 'person', undefined, undefined)).toEqual([7]);
    const after = await getItem(rows, 'Cust#A', 2);
    expect(after).toMatchObject({ rowSet: 'contact#Cust#A', rowPk: 2, version: 1, status: 'active' });

    const again = await backfillRowIndex({ client: dynamo.doc, table: rows });
    expect(again).toEqual({ scanned: 5, updated: 0, alreadyIndexed: 5 });
    expect(await getItem(rows, 'Cust#A', 2)).toEqual(after);
  });

  it('does not overwrite a row a worker rewrote between the scan and the update (the condition): counted as indexed', async () => {
    const { rows } = await dynamo.createTables();
    await putOldRow(dynamo, rows, 'CustR', 1);
    await putOldRow(dynamo, rows, 'CustR', 2);
    // A client of its own (a document client shares its base client's middleware): before its first
    // UpdateItem, "a worker" rewrites that row, with rowSet as this version writes it (a marker here, to see it kept).
    const racing = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: dynamo.endpoint,
        region: FAKE_AWS_ENV.AWS_REGION,
        credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
      }),
    );
    let raced: unknown;
    racing.middlewareStack.add(
      (next) => async (args) => {
        const input = args.input as { UpdateExpression?: string; Key?: { rowKey: string } };
        if (input.UpdateExpression !== undefined && raced === undefined) {
          raced = input.Key?.rowKey;
          const [, pk] = String(raced).split('#');
          const rewritten = {
            ...toRowItem(storedRow('CustR', Number(pk)), 2),
            rowSet: 'written-by-the-worker',
          };
          await dynamo.doc.send(new PutCommand({ TableName: rows, Item: rewritten }));
        }
        return next(args);
      },
      { step: 'initialize' },
    );

    const counts = await backfillRowIndex({ client: racing, table: rows, segments: 1, concurrency: 1 });
    racing.destroy();

    expect(counts).toEqual({ scanned: 2, updated: 1, alreadyIndexed: 1 });
    const pk = Number(String(raced).split('#')[1]);
    expect(await getItem(rows, 'CustR', pk)).toMatchObject({ rowSet: 'written-by-the-worker', version: 2 });
    expect(await getItem(rows, 'CustR', 3 - pk)).toMatchObject({ rowSet: 'contact#CustR', rowPk: 3 - pk });
  });

  it('two runs at once update each row once between them', async () => {
    const { rows } = await dynamo.createTables();
    for (let pk = 1; pk <= 40; pk++) await putOldRow(dynamo, rows, 'CustT', pk);

    const [one, two] = await Promise.all([
      backfillRowIndex({ client: dynamo.doc, table: rows, segments: 3 }),
      backfillRowIndex({ client: dynamo.doc, table: rows, segments: 2 }),
    ]);

    expect(one.updated + two.updated).toBe(40);
    expect(one.scanned + two.scanned).toBe(80);
    const stored = createStoredRows({ client: dynamo.doc, table: rows });
    expect(await stored.keys('CustT', 'contact', undefined, undefined)).toHaveLength(40);
  });
});
