/**
 * The pipeline's CloudWatch metrics as its functions publish them (Embedded Metric Format,
 * functions/shared/platform/metrics.ts) and its dashboards and alarms read them (the pipeline
 * stack, and `MonitoredDlq`'s per-DLQ dashboard in `@dlq-redrive/cdk`).
 *
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html
 */

/** The CloudWatch namespace of every pipeline metric. */
export const METRICS_NAMESPACE = 'DlqRedrive';
/** The `service` dimension of every pipeline metric. */
export const METRICS_SERVICE = 'dlq-redrive';
/** The per-DLQ dimension: the DLQ's queue name. */
export const DLQ_DIMENSION = 'DlqName';

/** The metrics the pipeline publishes and their CloudWatch units. */
export const PIPELINE_METRICS = {
  Inventoried: 'Count',
  Redriven: 'Count',
  Parked: 'Count',
  Discarded: 'Count',
  Missing: 'Count',
  StillInDlq: 'Count',
  Exposed: 'Count',
  RunDuration: 'Seconds',
  RunsCompleted: 'Count',
  RunsHalted: 'Count',
  RunsFailed: 'Count',
  RunsCancelled: 'Count',
  RunsRefused: 'Count',
  RunsSampleFailed: 'Count',
  RampRate: 'Count/Second',
  MovedByTask: 'Count',
} as const;
export type PipelineMetric = keyof typeof PIPELINE_METRICS;
