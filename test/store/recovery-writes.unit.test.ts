import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { createRecoveryStore, RECOVERY_WRITE_ATTRIBUTES } from '../../lib/store/recovery.js';

const dynamo = mockClient(DynamoDBDocumentClient);
afterEach(() => dynamo.reset());

const recovery = () =>
  createRecoveryStore(DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' })), 'webhooks');

/** Every top-level attribute an UpdateItem names: its key's, and those of its expressions (`#n` resolved). */
function attributesNamed(input: UpdateCommandInput): string[] {
  const expressions = `${input.UpdateExpression} ${input.ConditionExpression ?? ''}`;
  const names = new Set(Object.keys(input.Key ?? {}));
  for (const [token] of expressions.matchAll(/(?<![:#\w])#?[A-Za-z_]\w*(?=\s*(=|<|>|\)|,|$))/g)) {
    if (['SET', 'OR', 'AND'].includes(token)) continue;
    names.add(token.startsWith('#') ? input.ExpressionAttributeNames![token]! : token);
  }
  return [...names].sort();
}

describe('the recovery writes (lib/store/recovery.ts)', () => {
  it('each is one conditional UpdateItem naming exactly the attributes infra/iam.yml lets its function update', async () => {
    dynamo.on(UpdateCommand).resolves({});
    await recovery().recordReconcile('Cust1', 9, {
      status: 'completed',
      reason: 'poll',
      requestedAt: '2026-11-27T10:00:00.000Z',
      startedAt: '2026-11-27T10:00:10.000Z',
      at: '2026-11-27T10:01:00.000Z',
      rowsListed: 2,
    });
    await recovery().recordReactivation('Cust1', 9, '2026-11-27T10:00:00.000Z');

    const [reconcile, reactivation] = dynamo.commandCalls(UpdateCommand).map((call) => call.args[0].input);
    expect(reconcile?.Key).toEqual({ context: 'Cust1', sk: 'recovery#9' });
    expect(reconcile?.ConditionExpression).toBeDefined();
    expect(reconcile?.ReturnValues).toBeUndefined();
    expect(attributesNamed(reconcile!)).toEqual([...RECOVERY_WRITE_ATTRIBUTES.reconcile].sort());
    expect(attributesNamed(reactivation!)).toEqual([...RECOVERY_WRITE_ATTRIBUTES.reactivation].sort());
  });
});
