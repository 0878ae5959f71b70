import type { Template } from './package.js';

/**
 * What a function's role grants and what its bundle can call, as IAM actions: the two sides of the
 * least-privilege check in stack.test.ts.
 */

/** The IAM service of each AWS operation the functions' bundles hold (an unknown one fails the test: add it here). */
const SERVICE_OF: Record<string, string> = {
  GetItem: 'dynamodb',
  PutItem: 'dynamodb',
  UpdateItem: 'dynamodb',
  DeleteItem: 'dynamodb',
  Query: 'dynamodb',
  Scan: 'dynamodb',
  BatchGetItem: 'dynamodb',
  BatchWriteItem: 'dynamodb',
  TransactWriteItems: 'dynamodb',
  SendMessage: 'sqs',
  ChangeMessageVisibility: 'sqs',
  ReceiveMessage: 'sqs',
  DeleteMessage: 'sqs',
  GetQueueAttributes: 'sqs',
  GetParameter: 'ssm',
  PutParameter: 'ssm',
  PutEvents: 'events',
  Publish: 'sns',
  PutMetricData: 'cloudwatch',
};

/** Batch operations IAM authorizes with the single one's action. */
const AUTHORIZED_AS: Record<string, string> = {
  SendMessageBatch: 'SendMessage',
  DeleteMessageBatch: 'DeleteMessage',
  ChangeMessageVisibilityBatch: 'ChangeMessageVisibility',
};

/** Operations the SDK defines for itself, never sent by these functions (DynamoDB's endpoint discovery is off). */
const SDK_OWN = new Set(['DescribeEndpoints']);

/** The services whose calls are compared: the ones the functions' code calls (logs and kms are Lambda's and SNS's). */
export const CALLED_SERVICES = new Set(Object.values(SERVICE_OF));

/**
 * The IAM actions a minified bundle can call: each AWS SDK command class it holds (the SDK's
 * generated `class GetItemCommand extends command(ep, mw, "GetItem", schema) {}`) and each JSON
 * protocol target of lib/aws/json-call.ts (`"AmazonSSM.GetParameter"`).
 */
export function bundleActions(code: string): Set<string> {
  const operations = [
    ...[...code.matchAll(/extends [\w$]+\([\w$]+,[\w$]+,"([A-Za-z]+)",[\w$]+\)\{\}/g)].map((m) => m[1]!),
    ...[...code.matchAll(/"Amazon(?:SQS|SSM)\.([A-Za-z]+)"/g)].map((m) => m[1]!),
  ];
  const actions = new Set<string>();
  for (const operation of operations) {
    if (SDK_OWN.has(operation)) continue;
    const authorized = AUTHORIZED_AS[operation] ?? operation;
    const service = SERVICE_OF[authorized];
    if (service === undefined)
      throw new Error(`no IAM service known for ${operation}: add it to test/deploy/grants.ts`);
    actions.add(`${service}:${authorized}`);
  }
  return actions;
}

type Statement = { Effect: string; Action: string | string[] };

/** Every action allowed to `roleId`: its own policies and the stack's AWS::IAM::Policy resources attached to it. */
export function roleActions(template: Template, roleId: string): Set<string> {
  const statements: Statement[] = [];
  const role = template.Resources[roleId];
  for (const policy of (role?.Properties.Policies ?? []) as Array<{
    PolicyDocument: { Statement: Statement[] };
  }>)
    statements.push(...policy.PolicyDocument.Statement);
  for (const resource of Object.values(template.Resources)) {
    const roles = resource.Properties.Roles as Array<{ Ref?: string }> | undefined;
    if (resource.Type === 'AWS::IAM::Policy' && roles?.some((ref) => ref.Ref === roleId))
      statements.push(...(resource.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  }
  return new Set(statements.filter((s) => s.Effect === 'Allow').flatMap((s) => [s.Action].flat()));
}
