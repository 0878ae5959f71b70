import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { VersionConflictError } from './errors.js';

/* The DynamoDB calls both table adapters (dynamo.ts, dynamo-webhooks.ts) make the same way. */

export type Item = Record<string, unknown>;

export function defaultClient(): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(new DynamoDBClient({}), {
    marshallOptions: { removeUndefinedValues: true },
  });
}

/** Put that succeeds only on the version it was computed from (or on no item, for version 0). */
export async function versionedPut(
  doc: DynamoDBDocumentClient,
  table: string,
  item: Item,
  keyAttribute: string,
  key: string,
  expectedVersion: number,
): Promise<void> {
  const condition =
    expectedVersion === 0
      ? { ConditionExpression: `attribute_not_exists(${keyAttribute})` }
      : {
          ConditionExpression: '#v = :v',
          ExpressionAttributeNames: { '#v': 'version' },
          ExpressionAttributeValues: { ':v': expectedVersion },
        };
  const written = await conditional(() =>
    doc.send(new PutCommand({ TableName: table, Item: item, ...condition })),
  );
  if (!written) throw new VersionConflictError(table, key);
}

/** Runs a conditional write: `true` when written, `false` when its condition failed. */
export async function conditional(write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    if (error instanceof Error && error.name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
}

export async function collect(pages: AsyncIterable<{ Items?: Item[] }>): Promise<Item[]> {
  const items: Item[] = [];
  for await (const page of pages) items.push(...(page.Items ?? []));
  return items;
}

/** Top-level `undefined` values dropped (a caller's client may not be set to remove them). */
export function defined(value: object): Item {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}
