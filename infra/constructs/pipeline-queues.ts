/**
 * `PipelineQueues`: the queues the pipeline owns, SSE-SQS (the parking queue: or a given customer
 * managed key) and TLS only, 14 days retention.
 * - The parking queue: messages kept out of the bulk move (poison, permanent, over maxRedrives).
 *   A terminal holding area read by operators, so it has no DLQ of its own.
 * - The alarm delivery DLQ: alarm events that never reached triage (EventBridge target DLQ,
 *   triage's async-invoke DLQ) and execution-ended events that never reached their function,
 *   with an alarm (no action: add yours) when it holds a message.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-server-side-encryption.html
 * @see https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html
 */
import { aws_cloudwatch as cloudwatch, Duration, type aws_kms as kms, aws_sqs as sqs } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { acknowledge } from '../nag.js';

/** Properties of {@link PipelineQueues}. */
export interface PipelineQueuesProps {
  /**
   * A customer managed KMS key for the parking queue (PipelineStack's `parkingQueueEncryptionKey`).
   * @default - SSE-SQS
   */
  readonly parkingQueueEncryptionKey?: kms.IKey;
}

/** See the file header. */
export class PipelineQueues extends Construct {
  /** Messages kept out of the bulk move (poison, permanent, over maxRedrives). */
  public readonly parkingQueue: sqs.Queue;
  /** Failed deliveries of alarm events to triage, and of execution-ended events. */
  public readonly alarmDeliveryDlq: sqs.Queue;
  /** ALARM when an event could not reach its function (the delivery DLQ holds a message). */
  public readonly alarmDeliveryFailureAlarm: cloudwatch.Alarm;

  public constructor(scope: Construct, id: string, props: PipelineQueuesProps = {}) {
    super(scope, id);
    this.parkingQueue = new sqs.Queue(this, 'ParkingQueue', {
      ...(props.parkingQueueEncryptionKey
        ? { encryption: sqs.QueueEncryption.KMS, encryptionMasterKey: props.parkingQueueEncryptionKey }
        : { encryption: sqs.QueueEncryption.SQS_MANAGED }),
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      visibilityTimeout: Duration.minutes(5),
    });
    acknowledge(this.parkingQueue, {
      id: 'AwsSolutions-SQS3',
      reason:
        'The parking queue is a terminal holding area read by operators, not a consumer queue: a redrive policy would move a parked message elsewhere after a few inspections, while its envelope still says PARKED here.',
    });

    this.alarmDeliveryDlq = new sqs.Queue(this, 'AlarmDeliveryDlq', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    acknowledge(this.alarmDeliveryDlq, {
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is itself a dead-letter queue (EventBridge target DLQ and triage async-invoke DLQ).',
    });

    this.alarmDeliveryFailureAlarm = new cloudwatch.Alarm(this, 'AlarmDeliveryFailure', {
      alarmDescription:
        'dlq-redrive: an alarm event did not reach triage (EventBridge target or async invoke failed); see the AlarmDeliveryDlqUrl output',
      metric: this.alarmDeliveryDlq.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(5),
        statistic: 'Maximum',
      }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      // An idle queue stops publishing metrics (C04): no data means nothing failed.
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }
}
