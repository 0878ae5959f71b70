/** A CloudFormation resource or property bag, as the template generators build them. */
export type Template = Record<string, unknown>;

/**
 * A CloudWatch alarm to the stage's alert topic (AlertTopic) when its metric goes over 0 in one
 * period, missing data not breaching; `properties` may override any of these defaults.
 *
 * @example alarm({ AlarmName: 'x-dlq', Namespace: 'AWS/SQS', MetricName: 'ApproximateNumberOfMessagesVisible', ... })
 */
export function alarm(properties: Template): Template {
  return {
    Type: 'AWS::CloudWatch::Alarm',
    Properties: {
      EvaluationPeriods: 1,
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: [{ Ref: 'AlertTopic' }],
      OKActions: [{ Ref: 'AlertTopic' }],
      ...properties,
    },
  };
}

/** `ContactWorker` for `contactWorker`: a key as the logical ids spell it. */
export const pascal = (key: string) => key.charAt(0).toUpperCase() + key.slice(1);

/** `contact-worker` for `contactWorker`: a key as the resource names spell it. */
export const kebab = (key: string) => key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
