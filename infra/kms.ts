/**
 * The kmsKeyArn stage param: a customer managed KMS key (the user's, not the stack's) for every queue, table and
 * event bus of the stack, and the use of that key for the roles (infra/iam.yml) that touch them, read from what
 * their policies allow. Merged by the framework over
 * the resources of infra/resources.yml and infra/subscriptions.ts (`${file(infra/kms.cjs):resources}`, deep
 * merge of serverless.yml's `resources` list); without the param it is empty and the template unchanged.
 * What the key's own policy must allow: docs/privacy.md, "Customer managed keys".
 */

/** SQS reuses a data key this long (seconds, 60 to 86400) before asking KMS again: about one KMS call an hour per role and queue. */
export const KMS_DATA_KEY_REUSE_SECONDS = 3600;

/** The logical id of a role's AWS::IAM::Policy granting the key's use is the role's with this suffix. */
const KMS_POLICY_SUFFIX = 'KmsKeyPolicy';

type Template = Record<string, unknown>;
interface Resource {
  Type: string;
  Properties?: Record<string, unknown>;
}

/** The properties that put a resource of `type` under `keyArn`, or none for a type that holds no data. */
function encryption(type: string, keyArn: string): Record<string, unknown> | undefined {
  switch (type) {
    case 'AWS::SQS::Queue':
      // One server-side encryption per queue: SSE-SQS off, SSE-KMS on.
      return {
        SqsManagedSseEnabled: false,
        KmsMasterKeyId: keyArn,
        KmsDataKeyReusePeriodSeconds: KMS_DATA_KEY_REUSE_SECONDS,
      };
    case 'AWS::DynamoDB::Table':
      return { SSESpecification: { SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: keyArn } };
    case 'AWS::Events::EventBus':
      return { KmsKeyIdentifier: keyArn };
    default:
      return undefined;
  }
}

/** The logical id an ARN in a policy statement names (`Fn::GetAtt` or an index's `Fn::Join` of it). */
function referencedId(resource: unknown): string | undefined {
  if (typeof resource !== 'object' || resource === null) return undefined;
  const getAtt = (resource as Record<string, unknown>)['Fn::GetAtt'];
  if (Array.isArray(getAtt)) return String(getAtt[0]);
  const join = (resource as Record<string, unknown>)['Fn::Join'];
  if (Array.isArray(join) && Array.isArray(join[1])) return join[1].map(referencedId).find(Boolean);
  return undefined;
}

const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);

/**
 * The key's actions a role needs for what its policies allow on `encrypted` resources: sending to an SQS queue
 * GenerateDataKey and Decrypt, receiving Decrypt; a DynamoDB table's requests make DynamoDB use the key on the
 * caller's behalf (kms:ViaService), so those are granted through DynamoDB only.
 */
function keyUse(role: Resource, types: ReadonlyMap<string, string>): { sqs: Set<string>; dynamodb: boolean } {
  const sqs = new Set<string>();
  let dynamodb = false;
  const policies = asList(role.Properties?.Policies) as { PolicyDocument?: { Statement?: unknown } }[];
  for (const policy of policies) {
    for (const statement of asList(policy?.PolicyDocument?.Statement) as Record<string, unknown>[]) {
      const actions = asList(statement.Action).map(String);
      const touched = asList(statement.Resource)
        .map(referencedId)
        .map((id) => (id ? types.get(id) : undefined));
      if (touched.includes('AWS::SQS::Queue')) {
        if (actions.includes('sqs:SendMessage'))
          for (const a of ['kms:GenerateDataKey', 'kms:Decrypt']) sqs.add(a);
        if (actions.includes('sqs:ReceiveMessage')) sqs.add('kms:Decrypt');
      }
      if (touched.includes('AWS::DynamoDB::Table') && actions.some((a) => a.startsWith('dynamodb:')))
        dynamodb = true;
    }
  }
  return { sqs, dynamodb };
}

/**
 * The resources to merge over `templates` (the stack's resource files, each with `Resources`) for `keyArn`
 * ("" for AWS owned keys: nothing).
 */
export function kmsResources(templates: readonly Template[], keyArn: string): { Resources: Template } {
  if (keyArn === '') return { Resources: {} };
  const all: Record<string, Resource> = Object.assign(
    {},
    ...templates.map((template) => (template.Resources ?? {}) as Record<string, Resource>),
  );
  const types = new Map(Object.entries(all).map(([id, resource]) => [id, resource.Type]));
  const Resources: Template = {};
  for (const [id, resource] of Object.entries(all)) {
    const properties = encryption(resource.Type, keyArn);
    if (properties) Resources[id] = { Properties: properties };
    if (resource.Type !== 'AWS::IAM::Role') continue;
    const { sqs, dynamodb } = keyUse(resource, types);
    const Statement: unknown[] = [];
    if (sqs.size > 0) Statement.push({ Effect: 'Allow', Action: [...sqs].sort(), Resource: keyArn });
    if (dynamodb)
      Statement.push({
        Effect: 'Allow',
        Action: ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey'],
        Resource: keyArn,
        Condition: {
          StringEquals: { 'kms:ViaService': { 'Fn::Sub': `dynamodb.\${AWS::Region}.amazonaws.com` } },
        },
      });
    if (Statement.length === 0) continue;
    Resources[`${id}${KMS_POLICY_SUFFIX}`] = {
      Type: 'AWS::IAM::Policy',
      Properties: {
        PolicyName: 'kms-key',
        Roles: [{ Ref: id }],
        PolicyDocument: { Version: '2012-10-17', Statement },
      },
    };
  }
  return { Resources };
}
