const ACCOUNT = '123456789012';
/** A queue URL of the stage `test` in eu-west-1. */
export const url = (name: string) =>
  `https://sqs.eu-west-1.amazonaws.com/${ACCOUNT}/crm-webhook-receiver-test-${name}.fifo`;
/** A queue ARN of the stage `test`. */
export const arn = (name: string) =>
  `arn:aws:sqs:eu-west-1:${ACCOUNT}:crm-webhook-receiver-test-${name}.fifo`;

/** The outputs of the stage `test`'s stack, as DescribeStacks lists them. */
export function outputs(): Array<{ OutputKey: string; OutputValue: string }> {
  const list: Record<string, string> = {
    RowsTableName: 'crm-webhook-receiver-test-rows',
    EventsTableName: 'crm-webhook-receiver-test-events',
    WebhooksTableName: 'crm-webhook-receiver-test-webhooks',
    EventBusName: 'crm-webhook-receiver-test',
    // As serverless.yml writes it with the default parameters (test/deploy/stack.test.ts checks it).
    IngestSettings:
      '{"ENTITIES":"","ALLOW_UNSIGNED":"false","MAX_EVENT_AGE_SECONDS":"","MAX_BODY_BYTES":"","HEADER_PREFIX":""}',
  };
  for (const [key, name] of [
    ['Contact', 'contact'],
    ['Activity', 'activity'],
    ['WebhookState', 'webhook-state'],
    ['Entities', 'entities'],
    ['Parked', 'parked'],
    ['Reconcile', 'reconcile'],
  ] as const) {
    list[`${key}QueueUrl`] = url(name);
    list[`${key}DeadLetterQueueUrl`] = url(`${name}-dlq`);
    list[`${key}DeadLetterQueueArn`] = arn(`${name}-dlq`);
  }
  return Object.entries(list).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue }));
}

/** One parked delivery as ReceiveMessage returns it (`ops parked` asks for these attributes). */
export function parkedMessage(receiveCount = 1) {
  return {
    MessageId: 'm-1',
    Body: '{"Event":"sale.created"}',
    Attributes: { MessageGroupId: 'Cust1:sale:7', ApproximateReceiveCount: String(receiveCount) },
    MessageAttributes: { reason: { DataType: 'String', StringValue: 'unknown-event' } },
  };
}
