/**
 * `@dlq-redrive/contract`: what the dlq-redrive pipeline's functions and its CDK construct
 * (`@dlq-redrive/cdk`) agree on, in one place both import:
 *
 * - {@link QueueRegistration}: the registration schema, its stored item ({@link registrationItem})
 *   and its problems ({@link checkRegistration});
 * - the pipeline's metrics: namespace, dimensions, names and units ({@link PIPELINE_METRICS});
 * - SQS queue ARNs ({@link parseSqsArn}).
 *
 * Imports nothing of the pipeline; its one dependency is `zod` (`zod/mini`).
 *
 * @packageDocumentation
 */
export {
  DLQ_DIMENSION,
  METRICS_NAMESPACE,
  METRICS_SERVICE,
  PIPELINE_METRICS,
  type PipelineMetric,
} from './metrics.js';
export {
  AccessRole,
  checkRegistration,
  EVENT_BUS_ARN,
  IAM_ROLE_ARN,
  LAMBDA_FUNCTION_ARN,
  MessageOriginRegistration,
  QueueRegistration,
  REGISTRATION_LISTING,
  REGISTRATION_SHAPE_VERSION,
  type RegistrationProblem,
  registrationItem,
  registrationKeys,
  SLACK_CHANNEL_ID,
  SLACK_USER_ID,
  SNS_TOPIC_ARN,
} from './registration.js';
export { parseSqsArn, SQS_QUEUE_ARN_PATTERN, type SqsArn } from './sqs-arn.js';
