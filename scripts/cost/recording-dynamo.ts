import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AwsClientStub } from 'aws-sdk-client-mock';
import { itemBytes, units } from './item-bytes.js';
import { ASSUMPTIONS } from './prices.js';
import { STAGE_ENV } from './stage.js';

/**
 * Serves GetItem/PutItem/UpdateItem from memory and counts their units from the real item sizes; a
 * history item with an `eventId` also writes an entry of the events table's keys-only EventId index.
 */
export function recordDynamo(dynamo: AwsClientStub<DynamoDBDocumentClient>) {
  const items = new Map<string, Record<string, unknown>>();
  const counts = {
    wru: 0,
    rru: 0,
    requests: { GetItem: 0, PutItem: 0, UpdateItem: 0 },
    putWru: 0,
    markerWru: 0,
    noteWru: 0,
    indexWru: 0,
    indexBytes: 0,
    rowIndexWru: 0,
    rowIndexBytes: 0,
  };
  const keyOf = (table: string, item: Record<string, unknown>) =>
    `${table}:${JSON.stringify(table === 'rows' ? { rowKey: item.rowKey } : { rowKey: item.rowKey, seq: item.seq })}`;
  dynamo.on(GetCommand).callsFake((input: { TableName: string; Key: Record<string, unknown> }) => {
    counts.requests.GetItem++;
    const item = items.get(keyOf(input.TableName, input.Key));
    counts.rru += units(item === undefined ? 1 : itemBytes(item), 4096); // strongly consistent read
    return { Item: item === undefined ? undefined : structuredClone(item) };
  });
  dynamo.on(PutCommand).callsFake((input: { TableName: string; Item: Record<string, unknown> }) => {
    counts.requests.PutItem++;
    const wru = units(itemBytes(input.Item), 1024);
    counts.wru += wru;
    counts.putWru += wru;
    const { rowKey, seq, eventId } = input.Item;
    if (input.TableName === STAGE_ENV.EVENTS_TABLE && eventId !== undefined) {
      const entry = itemBytes({ eventId, rowKey, seq }) + ASSUMPTIONS.indexEntryOverheadBytes;
      counts.indexWru += units(entry, 1024);
      counts.indexBytes += entry;
    }
    // The rows table's byRowSet index: written when a row is created, its keys never change after.
    const { rowSet, rowPk } = input.Item;
    if (
      input.TableName === STAGE_ENV.ROWS_TABLE &&
      rowSet !== undefined &&
      !items.has(keyOf(input.TableName, input.Item))
    ) {
      const entry = itemBytes({ rowKey, rowSet, rowPk }) + ASSUMPTIONS.indexEntryOverheadBytes;
      counts.rowIndexWru += units(entry, 1024);
      counts.rowIndexBytes += entry;
    }
    items.set(keyOf(input.TableName, input.Item), structuredClone(input.Item));
    return {};
  });
  dynamo.on(UpdateCommand).callsFake((input: { TableName: string; Key: Record<string, unknown> }) => {
    counts.requests.UpdateItem++;
    if (input.TableName === STAGE_ENV.EVENTS_TABLE) {
      // The published note: an update costs the larger of the item before and after, the history item.
      const item = items.get(keyOf(input.TableName, input.Key));
      const wru = units(item === undefined ? 1 : itemBytes(item), 1024);
      counts.wru += wru;
      counts.noteWru += wru;
    } else {
      counts.wru += 1; // the last-accepted marker, under 1 KB
      counts.markerWru += 1;
    }
    return {};
  });
  return counts;
}
