/**
 * The pipeline's metrics on CloudWatch dashboards: {@link pipelineMetric} (one metric,
 * pipeline-wide or for one DLQ, dimension `DlqName`) and {@link dlqWidgets} (the graphs), used by
 * the pipeline's own dashboard and by each {@link MonitoredDlq}'s. Names, units and dimensions are
 * the ones the functions publish (`@dlq-redrive/contract`).
 *
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Dashboards.html
 */
import {
  DLQ_DIMENSION,
  METRICS_NAMESPACE,
  METRICS_SERVICE,
  type PipelineMetric,
} from '@dlq-redrive/contract';
import { aws_cloudwatch as cloudwatch, Duration } from 'aws-cdk-lib';

/** The period of every pipeline metric on the dashboards and alarms. */
export const METRIC_PERIOD = Duration.minutes(5);

/** One pipeline metric, pipeline-wide or for one DLQ. */
export function pipelineMetric(
  name: PipelineMetric,
  options: { dlqName?: string; statistic?: string; label?: string } = {},
): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: {
      service: METRICS_SERVICE,
      ...(options.dlqName === undefined ? {} : { [DLQ_DIMENSION]: options.dlqName }),
    },
    statistic: options.statistic ?? 'Sum',
    period: METRIC_PERIOD,
    ...(options.label === undefined ? {} : { label: options.label }),
  });
}

/** The graphs of the pipeline's metrics, pipeline-wide (no `dlqName`) or for one DLQ. */
export function dlqWidgets(dlqName?: string): cloudwatch.IWidget[] {
  const m = (name: PipelineMetric, statistic?: string) =>
    pipelineMetric(name, {
      ...(dlqName === undefined ? {} : { dlqName }),
      ...(statistic ? { statistic } : {}),
    });
  const title = (what: string) => (dlqName === undefined ? what : `${dlqName}: ${what}`);
  return [
    new cloudwatch.GraphWidget({
      title: title('where the messages ended (Reconcile)'),
      left: [m('Inventoried'), m('Redriven'), m('Parked'), m('Discarded'), m('StillInDlq')],
      right: [m('Missing')],
      width: 12,
    }),
    new cloudwatch.GraphWidget({
      title: title('runs by outcome'),
      left: [
        m('RunsCompleted'),
        m('RunsHalted'),
        m('RunsFailed'),
        m('RunsCancelled'),
        m('RunsRefused'),
        m('RunsSampleFailed'),
      ],
      stacked: true,
      width: 12,
    }),
    new cloudwatch.GraphWidget({
      title: title('ramp rate (msg/s) and messages moved by the move task'),
      left: [m('RampRate', 'Maximum')],
      right: [m('MovedByTask', 'Maximum')],
      width: 12,
    }),
    new cloudwatch.GraphWidget({
      title: title('exposure and run duration'),
      left: [m('Exposed')],
      right: [m('RunDuration', 'Maximum')],
      width: 12,
    }),
  ];
}
