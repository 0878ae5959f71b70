import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, type Template } from './package.js';

interface Statement {
  Sid: string;
  Effect: string;
  Action: string[];
  Resource: string[];
}

/** infra/deployer-policy.json, the policy docs/deploy.md hands to the deployer (a CI role). */
export function deployerPolicy(): { Version: string; Statement: Statement[] } {
  return JSON.parse(readFileSync(join(ROOT, 'infra', 'deployer-policy.json'), 'utf8'));
}

/**
 * What CloudFormation calls, with the deployer's credentials, to create, update and delete each resource
 * type the templates hold (beside the stack and its deployment bucket, which every template has).
 */
const NEEDS: Record<string, string[]> = {
  'AWS::ApiGatewayV2::Api': ['apigateway:POST', 'apigateway:PATCH', 'apigateway:DELETE', 'apigateway:GET'],
  'AWS::ApiGatewayV2::ApiMapping': ['apigateway:POST', 'apigateway:DELETE'],
  'AWS::ApiGatewayV2::DomainName': ['apigateway:POST', 'apigateway:PATCH', 'apigateway:DELETE'],
  'AWS::ApiGatewayV2::Integration': ['apigateway:POST', 'apigateway:PATCH'],
  'AWS::ApiGatewayV2::Route': ['apigateway:POST', 'apigateway:PATCH'],
  'AWS::ApiGatewayV2::Stage': [
    'apigateway:POST',
    'apigateway:PATCH',
    'logs:CreateLogDelivery',
    'logs:PutResourcePolicy',
  ],
  'AWS::CloudWatch::Alarm': [
    'cloudwatch:PutMetricAlarm',
    'cloudwatch:DeleteAlarms',
    'cloudwatch:DescribeAlarms',
  ],
  'AWS::DynamoDB::Table': [
    'dynamodb:CreateTable',
    'dynamodb:UpdateTable',
    'dynamodb:DescribeTable',
    'dynamodb:UpdateTimeToLive',
    'dynamodb:UpdateContinuousBackups',
  ],
  'AWS::Events::ApiDestination': [
    'events:CreateApiDestination',
    'events:UpdateApiDestination',
    'events:DeleteApiDestination',
  ],
  'AWS::Events::Connection': [
    'events:CreateConnection',
    'events:UpdateConnection',
    'secretsmanager:CreateSecret',
  ],
  'AWS::Events::EventBus': ['events:CreateEventBus', 'events:DeleteEventBus', 'events:DescribeEventBus'],
  'AWS::Events::Rule': [
    'events:PutRule',
    'events:PutTargets',
    'events:RemoveTargets',
    'events:DeleteRule',
    'iam:PassRole',
  ],
  'AWS::IAM::Policy': ['iam:PutRolePolicy', 'iam:DeleteRolePolicy'],
  'AWS::IAM::Role': [
    'iam:CreateRole',
    'iam:DeleteRole',
    'iam:GetRole',
    'iam:PutRolePolicy',
    'iam:UpdateAssumeRolePolicy',
  ],
  'AWS::KMS::Alias': ['kms:CreateAlias', 'kms:DeleteAlias'],
  'AWS::KMS::Key': [
    'kms:CreateKey',
    'kms:PutKeyPolicy',
    'kms:EnableKeyRotation',
    'kms:ScheduleKeyDeletion',
    'kms:DescribeKey',
  ],
  'AWS::Lambda::EventSourceMapping': [
    'lambda:CreateEventSourceMapping',
    'lambda:UpdateEventSourceMapping',
    'lambda:DeleteEventSourceMapping',
  ],
  'AWS::Lambda::Function': [
    'lambda:CreateFunction',
    'lambda:UpdateFunctionCode',
    'lambda:UpdateFunctionConfiguration',
    'lambda:DeleteFunction',
    'lambda:PutFunctionConcurrency',
    'iam:PassRole',
    's3:GetObject',
  ],
  'AWS::Lambda::Permission': ['lambda:AddPermission', 'lambda:RemovePermission'],
  'AWS::Lambda::Url': ['lambda:CreateFunctionUrlConfig', 'lambda:DeleteFunctionUrlConfig'],
  'AWS::Logs::LogGroup': ['logs:CreateLogGroup', 'logs:PutRetentionPolicy', 'logs:DeleteLogGroup'],
  'AWS::Route53::RecordSet': ['route53:ChangeResourceRecordSets', 'route53:GetChange'],
  'AWS::S3::Bucket': ['s3:CreateBucket', 's3:PutEncryptionConfiguration', 's3:PutBucketPublicAccessBlock'],
  'AWS::S3::BucketPolicy': ['s3:PutBucketPolicy', 's3:DeleteBucketPolicy'],
  'AWS::SNS::Subscription': ['sns:Subscribe', 'sns:Unsubscribe'],
  'AWS::SNS::Topic': ['sns:CreateTopic', 'sns:SetTopicAttributes', 'sns:DeleteTopic'],
  'AWS::SQS::Queue': [
    'sqs:CreateQueue',
    'sqs:SetQueueAttributes',
    'sqs:GetQueueAttributes',
    'sqs:DeleteQueue',
  ],
  'AWS::SQS::QueuePolicy': ['sqs:SetQueueAttributes'],
};

/** What `osls deploy` itself calls, whatever the template holds. */
const DEPLOY = [
  'cloudformation:CreateChangeSet',
  'cloudformation:ExecuteChangeSet',
  'cloudformation:DescribeStacks',
  'cloudformation:DescribeStackEvents',
  'cloudformation:ValidateTemplate',
  'cloudformation:UpdateTerminationProtection',
  's3:PutObject',
  's3:ListBucket',
  'ssm:GetParameter',
];

/** Every action a template's resources need that the deployer policy does not grant, or an unknown type. */
export function missingPermissions(template: Template): string[] {
  const granted = new Set(deployerPolicy().Statement.flatMap((statement) => statement.Action));
  const types = new Set(Object.values(template.Resources).map((resource) => resource.Type));
  const missing = DEPLOY.filter((action) => !granted.has(action)).map((action) => `deploy: ${action}`);
  for (const type of [...types].sort()) {
    const needs = NEEDS[type];
    if (needs === undefined) missing.push(`${type}: not in test/deploy/deployer-policy.ts`);
    else for (const action of needs) if (!granted.has(action)) missing.push(`${type}: ${action}`);
  }
  return missing;
}
