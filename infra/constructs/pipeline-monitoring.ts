/**
 * What an operator watches: a CloudWatch dashboard of the pipeline's own metrics (EMF, namespace
 * `DlqRedrive`, functions/shared/platform/metrics.ts) and two alarms:
 *
 * - `missingAlarm`: `Missing` > 0 in 5 minutes: a run could not account for a message (gone from the
 *   DLQ without a ledger entry or a move task that moved it). Conservation failed: look now.
 * - `haltedAlarm`: a run ended halted or failed (`RunsHalted` + `RunsFailed` >= 1 in 5 minutes):
 *   the health gate stopped a ramp (re-inflow, a failed move task) or a step failed.
 *
 * Both watch the pipeline-wide series (dimension `service=dlq-redrive` only); the alarms have no
 * action of their own: add yours (`missingAlarm.addAlarmAction(...)`), docs/observability.md.
 * {@link dlqWidgets} (`@dlq-redrive/cdk`) builds the same graphs for one DLQ (dimension `DlqName`), which
 * `MonitoredDlq` puts on a dashboard of its own, in the DLQ's stack.
 *
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Dashboards.html
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format.html
 */
import { dlqWidgets, METRIC_PERIOD, pipelineMetric } from '@dlq-redrive/cdk';
import { aws_cloudwatch as cloudwatch } from 'aws-cdk-lib';
import { Construct } from 'constructs';

/** Properties of {@link PipelineMonitoring}. */
export interface PipelineMonitoringProps {
  /** @default 'dlq-redrive' */
  readonly dashboardName?: string;
}

/** See the file header. */
export class PipelineMonitoring extends Construct {
  public readonly dashboard: cloudwatch.Dashboard;
  /** `Missing` > 0: a message the pipeline touched is unaccounted for. */
  public readonly missingAlarm: cloudwatch.Alarm;
  /** A run ended halted or failed. */
  public readonly haltedAlarm: cloudwatch.Alarm;

  public constructor(scope: Construct, id: string, props: PipelineMonitoringProps = {}) {
    super(scope, id);
    this.missingAlarm = new cloudwatch.Alarm(this, 'MissingMessagesAlarm', {
      alarmDescription:
        'dlq-redrive: a run could not account for a message (Missing > 0): gone from the DLQ without a ledger entry or a move task that moved it. dlq show <incident> lists the run.',
      metric: pipelineMetric('Missing'),
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.haltedAlarm = new cloudwatch.Alarm(this, 'RunHaltedAlarm', {
      alarmDescription:
        'dlq-redrive: a redrive run halted (health gate: re-inflow, failed move task) or failed at a step. dlq incidents shows it.',
      metric: new cloudwatch.MathExpression({
        expression: 'FILL(halted, 0) + FILL(failed, 0)',
        usingMetrics: { halted: pipelineMetric('RunsHalted'), failed: pipelineMetric('RunsFailed') },
        period: METRIC_PERIOD,
        label: 'runs halted or failed',
      }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: props.dashboardName ?? 'dlq-redrive',
      widgets: [
        [
          new cloudwatch.AlarmStatusWidget({
            title: 'dlq-redrive alarms',
            alarms: [this.missingAlarm, this.haltedAlarm],
            width: 24,
          }),
        ],
        ...dlqWidgets().map((w) => [w]),
      ],
    });
  }
}
