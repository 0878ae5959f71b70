/**
 * The alarms that come one per function, per table or per setting, merged into serverless.yml's
 * `resources` through infra/alarms.cjs (infra/alarms.yml holds the rest: the parked queue, 5xx, TooManyErrors).
 * Every alarm notifies the alert topic, whose key admits only alarms named `<service>-<stage>-*`.
 *
 * - deliveries failing authentication (RefusedByReason for the ingest's 401 reasons) above a threshold,
 *   so that scanners (405s, bodies without the event headers) do not keep an alarm firing;
 * - Lambda Errors and Throttles of every function of serverless.yml;
 * - DynamoDB read and write throttles of every table (and of its indexes);
 * - a message in any dead-letter queue (infra/dlq-alarms.ts);
 * - reconciliation: a run that gave up (ReconcileFailed), a webhook the poll could not set Active
 *   again (WebhookNotReactivated);
 * - optionally, a heartbeat: no delivery accepted for `heartbeatHours` hours.
 */
import * as z from 'zod';
import { METRIC, METRICS_NAMESPACE } from '../lib/metrics.js';
import { alarm, kebab, pascal, type Template } from './alarm.js';
import { loadDefinitions } from './definitions.js';
import { deadLetterAlarms } from './dlq-alarms.js';
import { loadServerless, SERVERLESS_YML } from './serverless-file.js';

export interface AlarmSettings {
  service: string;
  /** The `service` dimension the functions' metrics carry (custom.powertoolsServiceName); default `service`. */
  metricsService?: string;
  stage: string;
  /** `signatureFailureThreshold`: failed authentications in 15 minutes that raise the alarm. */
  signatureFailureThreshold: string;
  /** `heartbeatHours`: "" for no heartbeat, else whole hours from 1 to 24. */
  heartbeatHours: string;
  /** `eventIdIndex`: "true" when the events table has its EventId index (its write throttles alarm too). */
  eventIdIndex?: string;
}

/**
 * The RefusedByReason reasons of a 401 in lib/ingest/pipeline.ts: a wrong, rotated or missing secret, an
 * unsigned event for a context that has one, a state event without the receiver's token.
 */
export const AUTHENTICATION_FAILURES = [
  'signature-missing',
  'signature-invalid',
  'signature-wrong-context',
  'no-secret-configured',
  'state-token-invalid',
] as const;

const ServerlessSchema = z.object({ functions: z.record(z.string(), z.unknown()) });

/** The functions of serverless.yml, by key (`contactWorker`). */
export function functionKeys(serverlessPath: string | URL = SERVERLESS_YML): string[] {
  return Object.keys(ServerlessSchema.parse(loadServerless(serverlessPath)).functions);
}

/** `Resources` of the generated alarms. */
export function alarmResources(settings: AlarmSettings): { Resources: Template } {
  const prefix = `${settings.service}-${settings.stage}`;
  const metricsService = settings.metricsService ?? settings.service;
  const threshold = positiveInteger('signatureFailureThreshold', settings.signatureFailureThreshold);
  const Resources: Template = {
    IngestSignatureFailuresAlarm: alarm({
      AlarmName: `${prefix}-ingest-signature-failures`,
      AlarmDescription:
        `More than ${threshold} deliveries in 15 minutes failed authentication (a wrong or rotated secret, a ` +
        'context without one, a state event without the token); RefusedByReason says which.',
      Metrics: [
        {
          Id: 'failures',
          Label: 'deliveries failing authentication',
          Expression: `SUM([${AUTHENTICATION_FAILURES.map((_, i) => `FILL(r${i}, 0)`).join(', ')}])`,
          ReturnData: true,
        },
        ...AUTHENTICATION_FAILURES.map((reason, i) => ({
          Id: `r${i}`,
          ReturnData: false,
          MetricStat: {
            Metric: {
              Namespace: METRICS_NAMESPACE,
              MetricName: METRIC.RefusedByReason,
              Dimensions: [
                { Name: 'service', Value: metricsService },
                { Name: 'reason', Value: reason },
              ],
            },
            Period: 900,
            Stat: 'Sum',
          },
        })),
      ],
      EvaluationPeriods: 1,
      Threshold: threshold,
    }),
  };
  for (const key of functionKeys()) {
    const logicalId = `${pascal(key)}LambdaFunction`;
    const name = kebab(key);
    const dimensions = [{ Name: 'FunctionName', Value: { Ref: logicalId } }];
    Resources[`${pascal(key)}ErrorsAlarm`] = alarm({
      AlarmName: `${prefix}-${name}-errors`,
      AlarmDescription: `The ${name} function failed (an exception out of the handler, a timeout, out of memory); see its log group.`,
      ...metric('AWS/Lambda', 'Errors', dimensions, 300),
    });
    Resources[`${pascal(key)}ThrottlesAlarm`] = alarm({
      AlarmName: `${prefix}-${name}-throttles`,
      AlarmDescription: `Lambda throttled the ${name} function (its reserved concurrency, or the account's, was used up; docs/capacity.md).`,
      ...metric('AWS/Lambda', 'Throttles', dimensions, 300),
    });
  }
  const definitions = loadDefinitions({
    stage: settings.stage,
    service: settings.service,
    eventIdIndex: settings.eventIdIndex === 'true',
  });
  for (const table of definitions.tables) {
    const indexes = table.createTableInput.GlobalSecondaryIndexes ?? [];
    const series = [
      ...['ReadThrottleEvents', 'WriteThrottleEvents'].map((MetricName) => ({
        MetricName,
        index: undefined,
      })),
      ...indexes.map((index) => ({ MetricName: 'WriteThrottleEvents', index: index.IndexName })),
    ];
    Resources[`${table.logicalId}ThrottlesAlarm`] = alarm({
      AlarmName: `${prefix}-${table.key}-table-throttles`,
      AlarmDescription: `DynamoDB throttled reads or writes of the ${table.key} table${indexes.length > 0 ? ' or its indexes' : ''} (the workers retry; a lasting throttle fills the queues).`,
      Metrics: [
        {
          Id: 'throttles',
          Label: 'throttle events',
          Expression: `SUM([${series.map((_, i) => `FILL(t${i}, 0)`).join(', ')}])`,
          ReturnData: true,
        },
        ...series.map(({ MetricName, index }, i) => ({
          Id: `t${i}`,
          ReturnData: false,
          MetricStat: {
            Metric: {
              Namespace: 'AWS/DynamoDB',
              MetricName,
              Dimensions: [
                { Name: 'TableName', Value: { Ref: table.logicalId } },
                ...(index === undefined ? [] : [{ Name: 'GlobalSecondaryIndexName', Value: index }]),
              ],
            },
            Period: 300,
            Stat: 'Sum',
          },
        })),
      ],
      EvaluationPeriods: 1,
      Threshold: 0,
    });
  }
  Object.assign(
    Resources,
    deadLetterAlarms(prefix, definitions.queues),
    reconcileAlarms(prefix, metricsService),
  );
  const heartbeatHours = settings.heartbeatHours.trim();
  if (heartbeatHours !== '') {
    const hours = positiveInteger('heartbeatHours', heartbeatHours);
    if (hours > 24)
      throw new Error(`serverless.yml: the stage param heartbeatHours must be from 1 to 24 (hours), or ""`);
    Resources.IngestHeartbeatAlarm = alarm({
      AlarmName: `${prefix}-ingest-heartbeat`,
      AlarmDescription: `No delivery was accepted for ${hours} hours: is the webhook still Active in the CRM, and registered with this URL?`,
      ...metric(METRICS_NAMESPACE, METRIC.Accepted, [{ Name: 'service', Value: metricsService }], 3600),
      EvaluationPeriods: hours,
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      // No data is the point: no delivery, no metric.
      TreatMissingData: 'breaching',
    });
  }
  return { Resources };
}

/** Reconciliation's alarms: a run that gave up, a webhook not set Active again. */
function reconcileAlarms(prefix: string, metricsService: string): Template {
  return {
    ReconcileFailedAlarm: alarm({
      AlarmName: `${prefix}-reconcile-failed`,
      AlarmDescription:
        'A reconciliation gave up (receiver.reconcile.failed on the bus says which context and why): rows ' +
        'changed in its window may stay stale until the next one.',
      ...metric(METRICS_NAMESPACE, METRIC.ReconcileFailed, [{ Name: 'service', Value: metricsService }], 300),
    }),
    WebhookNotReactivatedAlarm: alarm({
      AlarmName: `${prefix}-webhook-not-reactivated`,
      AlarmDescription:
        'A webhook the CRM disabled could not be set Active again, or did not stay Active, 3 times in a row (the reconcile-poll ' +
        "function's error line names it and the CRM's reason, usually the test delivery not answered 200): no " +
        'events arrive meanwhile. The poll keeps trying with backoff; or set it Active in the CRM.',
      ...metric(
        METRICS_NAMESPACE,
        METRIC.WebhookNotReactivated,
        [{ Name: 'service', Value: metricsService }],
        300,
      ),
    }),
  };
}

function metric(Namespace: string, MetricName: string, Dimensions: unknown[], Period: number): Template {
  return { Namespace, MetricName, Dimensions, Statistic: 'Sum', Period };
}

function positiveInteger(param: string, value: string): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number) || number <= 0)
    throw new Error(
      `serverless.yml: the stage param ${param} must be a positive whole number, not "${value}"`,
    );
  return number;
}
