import { type DynamoDBDocumentClient, GetCommand, paginateQuery, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Row } from '../model/types.js';
import { decompressBody } from './body-codec.js';
import { collect, defaultClient, versionedPut } from './dynamo-calls.js';
import { VersionConflictError } from './errors.js';
import { ROW_SET_INDEX, rowKey, rowSetKey } from './keys.js';
import { fromRowItem, toRowItem } from './row-item.js';

/** The stored rows of one (context, entity), as a reconcile compares them with the CRM's ids. */
export interface StoredRows {
  /**
   * The primary keys stored in (`after`, `upTo`], ascending (either end open when undefined). Read
   * from an index, so a row created a moment ago may be missing: it was just written from the CRM.
   */
  keys(
    context: string,
    entity: string,
    after: number | undefined,
    upTo: number | undefined,
  ): Promise<number[]>;
  /** Whether any row of (context, entity) is stored: without one there are no deletes to find. */
  hasAny(context: string, entity: string): Promise<boolean>;
  /** The row's status, `undefined` when no row is stored (a strongly consistent read). */
  status(context: string, entity: string, primaryKey: number): Promise<string | undefined>;
  /**
   * The FieldValues of the newest stored rows of (context, entity) (the highest {@link SAMPLE_ROWS}
   * keys) merged: every field one of them carries, its value from the newest row where it is not
   * null; `undefined` when none has FieldValues. A list's or custom table's fields are the tenant's
   * own, and a reconcile learns them (and each typed field's form) from rows the webhooks delivered:
   * one row alone may predate a column the tenant added, or hold null where the others are typed.
   */
  sampleFieldValues(context: string, entity: string): Promise<Record<string, unknown> | undefined>;
  /**
   * The stored rows of these primary keys with their versions (one eventually consistent GetItem each,
   * in parallel), by primary key; a key with no row, or with one that cannot be read, is absent. A
   * reconcile sends only the snapshots that change their row.
   */
  rows(context: string, entity: string, primaryKeys: readonly number[]): Promise<Map<number, StoredRow>>;
  /**
   * Writes `row` (a stored row whose order keys a snapshot equal to it moved) over `version`, in one
   * conditional put; false when the row moved since (the worker is then given the snapshot instead).
   */
  confirm(row: Row, version: number): Promise<boolean>;
}

/** A stored row and the version its conditional write must match. */
export interface StoredRow {
  row: Row;
  version: number;
}

/** Stored rows {@link StoredRows.sampleFieldValues} reads (one GetItem each, once per entity and invocation). */
export const SAMPLE_ROWS = 5;

/**
 * {@link StoredRows} on the rows table: a Query of its KEYS_ONLY `byRowSet` index (`rowSet` =
 * entity and context, `rowPk` = the primary key), so a tenant's entity is read without scanning the
 * table, one GetItem of `status` per row the CRM no longer lists, and the conditional put of a row a
 * snapshot confirmed (the workers' own write: lib/store/row-item.ts, lib/store/dynamo.ts).
 */
export function createStoredRows(config: { client?: DynamoDBDocumentClient; table: string }): StoredRows {
  const doc = config.client ?? defaultClient();
  /** The row keys of the lowest primary keys of (context, entity), or of the highest (`newest`). */
  const firstKeys = (context: string, entity: string, limit: number, newest = false) =>
    noIndexSaid(config.table, () =>
      doc.send(
        new QueryCommand({
          TableName: config.table,
          IndexName: ROW_SET_INDEX,
          KeyConditionExpression: 'rowSet = :s',
          ExpressionAttributeValues: { ':s': rowSetKey(context, entity) },
          ScanIndexForward: !newest,
          Limit: limit,
        }),
      ),
    ).then(({ Items }) => (Items ?? []).map((item) => String(item.rowKey)));
  return {
    async keys(context, entity, after, upTo) {
      const values: Record<string, unknown> = { ':s': rowSetKey(context, entity) };
      let range = '';
      if (after !== undefined && upTo !== undefined) {
        range = ' AND rowPk BETWEEN :a AND :b';
        Object.assign(values, { ':a': after + 1, ':b': upTo });
      } else if (after !== undefined) {
        range = ' AND rowPk > :a';
        values[':a'] = after;
      } else if (upTo !== undefined) {
        range = ' AND rowPk <= :b';
        values[':b'] = upTo;
      }
      if (after !== undefined && upTo !== undefined && upTo <= after) return [];
      const items = await noIndexSaid(config.table, () =>
        collect(
          paginateQuery(
            { client: doc },
            {
              TableName: config.table,
              IndexName: ROW_SET_INDEX,
              KeyConditionExpression: `rowSet = :s${range}`,
              ExpressionAttributeValues: values,
            },
          ),
        ),
      );
      return items.map((item) => Number(item.rowPk));
    },

    async hasAny(context, entity) {
      return (await firstKeys(context, entity, 1)).length > 0;
    },

    async status(context, entity, primaryKey) {
      const { Item } = await doc.send(
        new GetCommand({
          TableName: config.table,
          Key: { rowKey: rowKey(context, entity, primaryKey) },
          ProjectionExpression: '#s',
          ExpressionAttributeNames: { '#s': 'status' },
          ConsistentRead: true,
        }),
      );
      return Item === undefined ? undefined : String(Item.status);
    },

    async rows(context, entity, primaryKeys) {
      const found = new Map<number, StoredRow>();
      await Promise.all(
        primaryKeys.map(async (primaryKey) => {
          const { Item } = await doc.send(
            new GetCommand({ TableName: config.table, Key: { rowKey: rowKey(context, entity, primaryKey) } }),
          );
          // A stored row that cannot be read is left out (counted as changed): the count never fails a
          // run; the worker that applies the snapshot meets the row and says what is wrong with it.
          if (Item === undefined) return;
          try {
            found.set(primaryKey, { row: fromRowItem(Item, config.table), version: Number(Item.version) });
          } catch {}
        }),
      );
      return found;
    },

    async confirm(row, version) {
      try {
        const item = toRowItem(row, version + 1);
        await versionedPut(doc, config.table, item, 'rowKey', String(item.rowKey), version);
        return true;
      } catch (error) {
        if (error instanceof VersionConflictError) return false;
        throw error;
      }
    },

    async sampleFieldValues(context, entity) {
      const merged = new Map<string, unknown>();
      for (const key of await firstKeys(context, entity, SAMPLE_ROWS, true)) {
        const { Item } = await doc.send(
          new GetCommand({
            TableName: config.table,
            Key: { rowKey: key },
            ProjectionExpression: 'fieldValuesJson',
          }),
        );
        const stored = Item?.fieldValuesJson as Uint8Array | undefined;
        // Stored FieldValues are always an object's text (toRowItem).
        const fieldValues = stored && (JSON.parse(decompressBody(stored)) as Record<string, unknown>);
        for (const [field, value] of Object.entries(fieldValues ?? {}))
          if ((merged.get(field) ?? null) === null) merged.set(field, value);
      }
      return merged.size > 0 ? Object.fromEntries(merged) : undefined;
    },
  };
}

/**
 * A rows table created before the index (a DATA_DIR of an older version: dynalite cannot add an index
 * to a table) says so in one line instead of the SDK's ValidationException.
 */
async function noIndexSaid<T>(table: string, query: () => Promise<T>): Promise<T> {
  try {
    return await query();
  } catch (error) {
    if (error instanceof Error && error.name === 'ValidationException' && /index/i.test(error.message))
      throw new Error(
        `the ${table} table has no ${ROW_SET_INDEX} index, which reconciliation needs to find deleted rows: deploy the stack again (it adds it), or locally start with a fresh DATA_DIR`,
        { cause: error },
      );
    throw error;
  }
}
