import {
  type CloudWatchClient,
  GetMetricDataCommand,
  type MetricDataQuery,
} from '@aws-sdk/client-cloudwatch';
import { createOutcomeCounter, OUTCOME_METRICS, OUTCOMES } from '../../dashboard/activity.js';
import type { OutcomeSeries } from '../../dashboard/source.js';
import { METRICS_NAMESPACE } from '../../lib/metrics.js';

const MINUTE = 60_000;

/**
 * Events per minute by outcome over the last `minutes` minutes, from CloudWatch: one GetMetricData
 * call (paged) with a per-minute Sum of each outcome's metric (`EventsApplied`, ..., `Refused`) under
 * the `service` dimension every function's metrics carry.
 */
export async function outcomeSeries(
  cloudWatch: CloudWatchClient,
  options: { service: string; now?: number; minutes?: number },
): Promise<OutcomeSeries> {
  const { service, now = Date.now(), minutes = 60 } = options;
  const names = Object.keys(OUTCOME_METRICS);
  const queries: MetricDataQuery[] = names.map((name, index) => ({
    Id: `m${index}`,
    MetricStat: {
      Metric: {
        Namespace: METRICS_NAMESPACE,
        MetricName: name,
        Dimensions: [{ Name: 'service', Value: service }],
      },
      Period: 60,
      Stat: 'Sum',
    },
    ReturnData: true,
  }));
  const end = (Math.floor(now / MINUTE) + 1) * MINUTE;
  const counter = createOutcomeCounter();
  let NextToken: string | undefined;
  do {
    const page = await cloudWatch.send(
      new GetMetricDataCommand({
        MetricDataQueries: queries,
        StartTime: new Date(end - minutes * MINUTE),
        EndTime: new Date(end),
        ScanBy: 'TimestampAscending',
        NextToken,
      }),
    );
    for (const result of page.MetricDataResults ?? []) {
      const outcome = OUTCOME_METRICS[names[Number(result.Id?.slice(1))] ?? ''];
      if (outcome === undefined) continue;
      for (const [index, at] of (result.Timestamps ?? []).entries())
        counter.add(outcome, result.Values?.[index] ?? 0, at.getTime());
    }
    NextToken = page.NextToken;
  } while (NextToken !== undefined);
  return { outcomes: OUTCOMES, perMinute: counter.perMinute(now, minutes) };
}
