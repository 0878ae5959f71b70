import { Metrics } from '@aws-lambda-powertools/metrics';
import { METRICS_NAMESPACE } from './metrics.js';

/** Told of each metric a function adds, by name and value. */
export type MetricObserver = (name: string, value: number) => void;

const observers = new Set<MetricObserver>();

/** Powertools' Metrics, telling the observers of each metric it adds before it stores it. */
class ObservedMetrics extends Metrics {
  override addMetric(...args: Parameters<Metrics['addMetric']>): this {
    const [name, , value] = args;
    for (const observer of observers) observer(name, value);
    return super.addMetric(...args);
  }
}

/**
 * The Metrics a function emits with, under the functions' namespace: each function builds its own
 * here, so that whoever runs the functions in-process can see what they count (see
 * {@link observeMetrics}). On Lambda nothing observes, and it is Powertools' Metrics as is.
 */
export function createMetrics(): Metrics {
  return new ObservedMetrics({ namespace: METRICS_NAMESPACE });
}

/**
 * Tells `observer` of every metric added to a Metrics of {@link createMetrics}, from now until the
 * returned undo is called. The local runtime feeds the dashboard's outcome chart this way, as metrics
 * are not published locally.
 *
 * @example
 * const stop = observeMetrics((name, value) => counts.set(name, (counts.get(name) ?? 0) + value));
 */
export function observeMetrics(observer: MetricObserver): () => void {
  observers.add(observer);
  return () => {
    observers.delete(observer);
  };
}
