import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Row } from '../../lib/model/types.js';
import { toRowItem } from '../../lib/store/row-item.js';
import type { LocalDynamo } from './dynamo.js';

/** A minimal stored row: active, created once. */
export function storedRow(
  context: string,
  primaryKey: number,
  entity: 'contact' | 'person' = 'contact',
): Row {
  return {
    context,
    entity,
    primaryKey,
    status: 'active',
    changedFields: [],
    changedFieldSeqs: {},
    lastEventId: '00000000-0000-0000-0000-000000000000',
    lastEvent: `${entity}.created`,
    lastTimestamp: '2026-01-01T00:00:00Z',
    lastSeq: '',
    recentSeqs: [],
    changedByAssociateId: 0,
    eventCount: 1,
  } as unknown as Row;
}

/** Puts {@link storedRow} as a version before the byRowSet index wrote it: no `rowSet`, no `rowPk`. */
export async function putOldRow(
  dynamo: LocalDynamo,
  table: string,
  context: string,
  primaryKey: number,
  entity?: 'contact' | 'person',
): Promise<void> {
  const { rowSet: _s, rowPk: _pk, ...item } = toRowItem(storedRow(context, primaryKey, entity), 1);
  await dynamo.doc.send(new PutCommand({ TableName: table, Item: item }));
}
