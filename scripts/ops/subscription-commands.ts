import {
  type EventBridgeClient,
  PutEventsCommand,
  UpdateConnectionCommand,
} from '@aws-sdk/client-eventbridge';
import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { PutParameterCommand, type SSMClient } from '@aws-sdk/client-ssm';
import { SERVICE } from '../../infra/definitions.js';
import { loadSubscriptions, logicalName } from '../../lib/bus/subscriptions.js';
import { objectMembers } from '../../lib/json-text.js';
import { OpsError, output, type StackOutputs } from './commands.js';

export interface RedriveReport {
  subscription: string;
  redriven: number;
  failed: Array<{ messageId: string; reason: string }>;
}

/** How long a received dead letter stays hidden while it is put on the redrive bus. */
const VISIBILITY_SECONDS = 60;

/**
 * Sends a subscription's dead letters to its target again: each DLQ message (the event as EventBridge
 * would have delivered it) is put on the stage's redrive bus with the subscription rule's ARN in
 * `resources`, where only that subscription's redrive rule matches it (infra/subscriptions.ts); the
 * target, retry policy and DLQ are the subscription's own. A message is deleted once PutEvents took it;
 * one that cannot be put stays in the DLQ and is reported. The consumer sees the same source,
 * detail-type, detail and time, a new `id`, and the rule's ARN in `resources`.
 */
export async function redriveSubscription(
  clients: { sqs: SQSClient; eventBridge: EventBridgeClient },
  outputs: StackOutputs,
  options: { stage: string; name: string; max?: number | undefined },
): Promise<RedriveReport> {
  const { stage, name, max = Number.POSITIVE_INFINITY } = options;
  const prefix = `${SERVICE}-${stage}`;
  const key = `${logicalName(name)}SubscriptionDeadLetterQueueUrl`;
  if (outputs[key] === undefined) {
    const known = Object.keys(outputs)
      .map((k) => /^(.+)SubscriptionDeadLetterQueueUrl$/.exec(k)?.[1])
      .filter((k) => k !== undefined)
      // Back from the logical name (`DepartmentChanges`) to the subscription's (`department-changes`).
      .map((k) => k.replace(/(?!^)([A-Z])/g, '-$1').toLowerCase());
    throw new OpsError(
      `stage ${stage} has no subscription ${name} (its stack output ${key} is missing); subscriptions: ${known.join(', ') || 'none'}`,
    );
  }
  const queueUrl = output(outputs, key);
  const bus = output(outputs, 'RedriveBusName');
  const ruleArn = new RegExp(`^arn:[^:]+:events:[^:]+:\\d+:rule/${prefix}/${prefix}-${name}$`);
  const report: RedriveReport = { subscription: name, redriven: 0, failed: [] };
  while (report.redriven + report.failed.length < max) {
    const { Messages = [] } = await clients.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: Math.min(10, max - report.redriven - report.failed.length),
        VisibilityTimeout: VISIBILITY_SECONDS,
        WaitTimeSeconds: 0,
        MessageAttributeNames: ['All'],
      }),
    );
    if (Messages.length === 0) break;
    const entries: Array<{ message: Message; entry: ReturnType<typeof toEntry> }> = [];
    for (const message of Messages) {
      try {
        entries.push({ message, entry: toEntry(message, bus, ruleArn) });
      } catch (error) {
        report.failed.push({ messageId: message.MessageId ?? '', reason: (error as Error).message });
      }
    }
    if (entries.length === 0) continue;
    const { Entries = [] } = await clients.eventBridge.send(
      new PutEventsCommand({ Entries: entries.map(({ entry }) => entry) }),
    );
    const taken = entries.filter(({ message }, i) => {
      const result = Entries[i];
      if (result?.EventId !== undefined && result.ErrorCode === undefined) return true;
      const reason = `PutEvents: ${result?.ErrorCode ?? 'no result'} ${result?.ErrorMessage ?? ''}`.trim();
      report.failed.push({ messageId: message.MessageId ?? '', reason });
      return false;
    });
    if (taken.length === 0) continue;
    await clients.sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: taken.map(({ message }, i) => ({ Id: String(i), ReceiptHandle: message.ReceiptHandle })),
      }),
    );
    report.redriven += taken.length;
  }
  return report;
}

/** The PutEvents entry that redrives one dead letter; throws, with the reason, when it is not one of ours. */
function toEntry(message: Message, bus: string, ruleArn: RegExp) {
  const rule = message.MessageAttributes?.RULE_ARN?.StringValue;
  if (rule === undefined || !ruleArn.test(rule))
    throw new Error(`its RULE_ARN (${rule ?? 'none'}) is not this subscription's rule`);
  let members: Map<string, string>;
  try {
    members = objectMembers(message.Body ?? '');
  } catch {
    throw new Error('its body is not an event (JSON object)');
  }
  const text = (member: string): string => {
    const value = members.get(member);
    const parsed: unknown = value === undefined ? undefined : JSON.parse(value);
    if (typeof parsed !== 'string') throw new Error(`its body has no "${member}" string`);
    return parsed;
  };
  const detail = members.get('detail');
  if (detail === undefined) throw new Error('its body has no "detail"');
  // The detail's exact text: numbers and dates as the workers published them.
  return {
    EventBusName: bus,
    Source: text('source'),
    DetailType: text('detail-type'),
    Detail: detail,
    Time: new Date(text('time')),
    Resources: [rule],
  };
}

/**
 * Rotates the API key a `url` subscription sends: writes `value` to the subscription's SSM parameter
 * (`auth.parameter` in subscriptions.yml, the value the template resolves) and to its EventBridge
 * connection at once (UpdateConnection). A deploy alone would not do it: CloudFormation does not read a
 * dynamic reference again while the template is unchanged. The key is never printed.
 */
export async function rotateSubscriptionKey(
  clients: { ssm: SSMClient; eventBridge: EventBridgeClient },
  options: { stage: string; name: string; value: string; root: string },
): Promise<{ subscription: string; parameter: string; connection: string; state: string | undefined }> {
  const { stage, name, root } = options;
  const value = options.value.trim();
  if (value === '')
    throw new OpsError('pipe the new API key on standard input (it is never read from an argument)');
  const subscription = loadSubscriptions({ root, mode: 'aws' }).find((s) => s.name === name);
  if (subscription === undefined) throw new OpsError(`subscriptions.yml has no subscription ${name}`);
  if (subscription.auth === undefined)
    throw new OpsError(`subscription ${name} has no auth: only a url target with auth sends an API key`);
  const { header, parameter } = subscription.auth;
  await clients.ssm.send(
    new PutParameterCommand({ Name: parameter, Value: value, Type: 'String', Overwrite: true }),
  );
  const connection = `${SERVICE}-${stage}-${name}`;
  const { ConnectionState } = await clients.eventBridge.send(
    new UpdateConnectionCommand({
      Name: connection,
      AuthorizationType: 'API_KEY',
      AuthParameters: { ApiKeyAuthParameters: { ApiKeyName: header, ApiKeyValue: value } },
    }),
  );
  return { subscription: name, parameter, connection, state: ConnectionState };
}
