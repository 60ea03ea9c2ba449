/**
 * The pipeline's CloudWatch metrics, as Embedded Metric Format log lines (Powertools Metrics): no
 * PutMetricData call, no extra permission, one JSON line per publish that CloudWatch Logs turns
 * into metrics. Namespace {@link METRICS_NAMESPACE}; every metric is published twice, once with the
 * dimension `DlqName` (per DLQ: the per-DLQ dashboard rows) and once with only `service`
 * (`dlq-redrive`: the pipeline-wide totals the alarms watch).
 *
 * | metric | unit | published by |
 * | --- | --- | --- |
 * | `Inventoried`, `Redriven`, `Parked`, `Discarded`, `Missing`, `StillInDlq` | Count | Reconcile (the run's final accounting) |
 * | `Exposed` | Count | Notify (messages the ramp found back in the DLQ: `$.ramp.exposure.returned`, else `$.ramp.reinflow`) |
 * | `RunDuration` | Seconds | Notify (execution start to its end) |
 * | `RunsCompleted`, `RunsHalted`, `RunsFailed`, `RunsCancelled`, `RunsRefused`, `RunsSampleFailed` | Count | Notify (one per run, by outcome) |
 * | `RampRate` | Count/Second | MoveTask (the move task's rate after each action) |
 * | `MovedByTask` | Count | MoveTask (moved so far by the run's move tasks) |
 *
 * `POWERTOOLS_METRICS_DISABLED=true` silences them (tests, the local demo).
 *
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html
 * @see https://docs.powertools.aws.dev/lambda/typescript/latest/core/metrics/
 */
import { Metrics } from '@aws-lambda-powertools/metrics';
import {
  DLQ_DIMENSION,
  METRICS_NAMESPACE,
  METRICS_SERVICE,
  PIPELINE_METRICS,
  type PipelineMetric,
} from '@dlq-redrive/contract';

// Names, dimensions and units are shared with the dashboards of `@dlq-redrive/cdk`: one definition.
export { DLQ_DIMENSION, METRICS_NAMESPACE, METRICS_SERVICE, PIPELINE_METRICS, type PipelineMetric };

/** The metrics port the cores use. */
export interface RunMetrics {
  /** Publishes `values` for the DLQ now (per DLQ and pipeline-wide). Never throws. */
  record(dlqArn: string, values: Partial<Record<PipelineMetric, number>>): void;
}

/** The run counter of an outcome (`halted` -> `RunsHalted`), or undefined for other outcomes. */
export function outcomeMetric(outcome: string): PipelineMetric | undefined {
  const byOutcome: Record<string, PipelineMetric> = {
    completed: 'RunsCompleted',
    halted: 'RunsHalted',
    failed: 'RunsFailed',
    cancelled: 'RunsCancelled',
    refused: 'RunsRefused',
    'sample-failed': 'RunsSampleFailed',
  };
  return byOutcome[outcome];
}

/**
 * EMF metrics through Powertools.
 * @param metrics - @default a Metrics of {@link METRICS_NAMESPACE} / {@link METRICS_SERVICE}
 */
export function createRunMetrics(
  metrics: Metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: METRICS_SERVICE }),
): RunMetrics {
  return {
    record(dlqArn, values) {
      const entries = Object.entries(values).filter(
        (e): e is [PipelineMetric, number] => typeof e[1] === 'number' && Number.isFinite(e[1]),
      );
      if (entries.length === 0) return;
      const dlqName = dlqArn.split(':').pop() ?? dlqArn;
      try {
        for (const perDlq of [true, false]) {
          if (perDlq) metrics.addDimension(DLQ_DIMENSION, dlqName);
          for (const [name, value] of entries) metrics.addMetric(name, PIPELINE_METRICS[name], value);
          metrics.publishStoredMetrics();
        }
      } catch {
        // A metric must never fail a redrive.
      }
    },
  };
}

let shared: RunMetrics | undefined;

/** The container's {@link RunMetrics}, built once. */
export function sharedRunMetrics(): RunMetrics {
  shared ??= createRunMetrics();
  return shared;
}
