/**
 * `PipelineQueues`: the queues the pipeline owns, SSE-SQS (the parking queue: or a given customer
 * managed key) and TLS only, 14 days retention.
 * - The parking queue: messages kept out of the bulk move (poison, permanent, over maxRedrives).
 *   A terminal holding area read by operators, so it has no DLQ of its own. SQS deletes a parked
 *   message when its retention ends, so an alarm (no action: add yours) goes off while there is
 *   still time: its oldest message at {@link PARKING_AGE_ALARM_RATIO} of the retention period.
 * - The alarm delivery DLQ: alarm events that never reached triage (EventBridge target DLQ,
 *   triage's async-invoke DLQ) and execution-ended events that never reached their function,
 *   with an alarm (no action: add yours) when it holds a message.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-server-side-encryption.html
 * @see https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-available-cloudwatch-metrics.html
 */
import { aws_cloudwatch as cloudwatch, Duration, type aws_kms as kms, aws_sqs as sqs } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { acknowledge } from '../nag.js';

/** The parking queue's retention period. */
export const PARKING_RETENTION = Duration.days(14);
/**
 * The fraction of {@link PARKING_RETENTION} the parking queue's oldest message may reach before
 * its age alarm: 0.75 of 14 days is 10.5 days, which leaves 3.5 days (a weekend and a working
 * day) to un-park, move or copy a message before SQS deletes it.
 */
export const PARKING_AGE_ALARM_RATIO = 0.75;

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
  /** ALARM when the oldest parked message has used {@link PARKING_AGE_ALARM_RATIO} of its retention. */
  public readonly parkingAgeAlarm: cloudwatch.Alarm;

  public constructor(scope: Construct, id: string, props: PipelineQueuesProps = {}) {
    super(scope, id);
    this.parkingQueue = new sqs.Queue(this, 'ParkingQueue', {
      ...(props.parkingQueueEncryptionKey
        ? { encryption: sqs.QueueEncryption.KMS, encryptionMasterKey: props.parkingQueueEncryptionKey }
        : { encryption: sqs.QueueEncryption.SQS_MANAGED }),
      enforceSSL: true,
      retentionPeriod: PARKING_RETENTION,
      visibilityTimeout: Duration.minutes(5),
    });
    const ageThreshold = Math.floor(PARKING_RETENTION.toSeconds() * PARKING_AGE_ALARM_RATIO);
    this.parkingAgeAlarm = new cloudwatch.Alarm(this, 'ParkingAgeAlarm', {
      alarmDescription: `dlq-redrive: the oldest parked message is ${ageThreshold} s old, ${PARKING_AGE_ALARM_RATIO * 100}% of the parking queue's retention (${PARKING_RETENTION.toSeconds()} s): un-park or copy it before SQS deletes it (dlq incidents, dlq unpark)`,
      metric: this.parkingQueue.metricApproximateAgeOfOldestMessage({
        period: Duration.minutes(5),
        statistic: 'Maximum',
      }),
      threshold: ageThreshold,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      // An empty queue publishes no age: nothing parked is nothing expiring.
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
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
      // An idle queue stops publishing metrics: no data means nothing failed.
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }
}
