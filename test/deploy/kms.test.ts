import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KMS_DATA_KEY_REUSE_SECONDS, kmsResources } from '../../infra/kms.js';
import { packageStack, ROOT, type Template } from './package.js';

// The kmsKeyArn param: one packaging with it (and the fan-out's subscriptions, for their queues and redrive bus).
const KEY = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
const DIR = join(tmpdir(), `crm-kms-${process.pid}`);
const SQS_SEND = ['kms:Decrypt', 'kms:GenerateDataKey'];
const SQS_RECEIVE = ['kms:Decrypt'];
const VIA_DYNAMODB = {
  Effect: 'Allow',
  Action: ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey'],
  Resource: KEY,
  Condition: { StringEquals: { 'kms:ViaService': { 'Fn::Sub': `dynamodb.\${AWS::Region}.amazonaws.com` } } },
};
const sqs = (Action: string[]) => ({ Effect: 'Allow', Action, Resource: KEY });

let template: Template;

beforeAll(async () => {
  ({ template } = await packageStack({ kmsKeyArn: KEY }, DIR, {
    SUBSCRIPTIONS_FILE: 'test/deploy/fanout-subscriptions.yml',
  }));
}, 600_000);
afterAll(() => rmSync(DIR, { recursive: true, force: true }));

const ofType = (type: string) => Object.entries(template.Resources).filter(([, r]) => r.Type === type);

describe('kmsKeyArn', () => {
  it('puts every queue, table and event bus under the key', () => {
    const queues = ofType('AWS::SQS::Queue');
    // The 12 of infra/resources.yml, a dead-letter queue per subscription (4) and sales-sold's target queue.
    expect(queues.length).toBe(17);
    for (const [, queue] of queues)
      expect(queue.Properties).toMatchObject({
        SqsManagedSseEnabled: false,
        KmsMasterKeyId: KEY,
        KmsDataKeyReusePeriodSeconds: KMS_DATA_KEY_REUSE_SECONDS,
      });
    const tables = ofType('AWS::DynamoDB::Table');
    expect(tables.map(([id]) => id).sort()).toEqual(['EventsTable', 'RowsTable', 'WebhooksTable']);
    for (const [, table] of tables)
      expect(table.Properties.SSESpecification).toEqual({
        SSEEnabled: true,
        SSEType: 'KMS',
        KMSMasterKeyId: KEY,
      });
    const buses = ofType('AWS::Events::EventBus');
    expect(buses.map(([id]) => id).sort()).toEqual(['EventBus', 'RedriveBus']);
    for (const [, bus] of buses) expect(bus.Properties.KmsKeyIdentifier).toBe(KEY);
  });

  it('gives exactly the roles that touch them the key, senders and receivers of queues and users of tables', () => {
    const grants = Object.fromEntries(
      ofType('AWS::IAM::Policy')
        .filter(([, policy]) => JSON.stringify(policy.Properties.PolicyDocument).includes(KEY))
        .map(([, policy]) => {
          const { Roles, PolicyDocument } = policy.Properties as {
            Roles: { Ref: string }[];
            PolicyDocument: { Statement: unknown[] };
          };
          expect(Roles).toHaveLength(1);
          return [Roles[0]!.Ref, PolicyDocument.Statement];
        }),
    );
    expect(grants).toEqual({
      IngestRole: [sqs(SQS_SEND)],
      ContactWorkerRole: [sqs(SQS_RECEIVE), VIA_DYNAMODB],
      ActivityWorkerRole: [sqs(SQS_RECEIVE), VIA_DYNAMODB],
      EntitiesWorkerRole: [sqs(SQS_RECEIVE), VIA_DYNAMODB],
      // Receives its queue and sends reconcile requests.
      WebhookStateWorkerRole: [sqs(SQS_SEND), VIA_DYNAMODB],
      ReconcileRole: [sqs(SQS_SEND), VIA_DYNAMODB],
      ReconcilePollRole: [sqs(SQS_SEND), VIA_DYNAMODB],
      RetireSecretsRole: [VIA_DYNAMODB],
    });
    // No role's own policies name the key: these policies are all it gets.
    for (const [, role] of ofType('AWS::IAM::Role'))
      expect(JSON.stringify(role.Properties)).not.toContain(KEY);
  });

  it('adds nothing without the param (the template as with AWS owned keys)', () => {
    const files = ['resources.yml', 'iam.yml'].map(
      (name) => load(readFileSync(join(ROOT, 'infra', name), 'utf8')) as Record<string, unknown>,
    );
    expect(kmsResources(files, '')).toEqual({ Resources: {} });
  });
});
