/**
 * `@dlq-redrive/cdk`: the constructs that put an SQS dead-letter queue under a dlq-redrive
 * pipeline, installed beside `aws-cdk-lib`.
 *
 * - {@link MonitoredDlq}: alarms on a DLQ routed to triage, its registration, the pipeline's grants.
 * - {@link DlqCompositeAlarm}: one composite alarm over several monitored DLQs.
 * - {@link IRedrivePipeline}: the pipeline they register with: its stack, or one deployed elsewhere
 *   in the same account and Region ({@link RedrivePipeline.fromAttributes}).
 * - {@link ValidationError}: invalid props, every problem in one error.
 * - The function catalogue (`@dlq-redrive/cdk/function-catalog`): what each pipeline function may
 *   touch, shared with the pipeline stack.
 *
 * @packageDocumentation
 */
export { DlqCompositeAlarm, type DlqCompositeAlarmProps } from './dlq-composite-alarm.js';
export { dlqWidgets, METRIC_PERIOD, pipelineMetric } from './dlq-widgets.js';
export { ValidationError } from './errors.js';
export type { FunctionName } from './function-catalog.js';
export {
  MonitoredDlq,
  type MonitoredDlqProps,
  type RegistrationItem,
  registrationItem,
  SQS_DEFAULT_RETENTION,
} from './monitored-dlq.js';
export { type IRedrivePipeline, RedrivePipeline, type RedrivePipelineAttributes } from './pipeline.js';
