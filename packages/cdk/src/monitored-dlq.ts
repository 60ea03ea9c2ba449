/**
 * `MonitoredDlq`: puts an existing queue's DLQ under the redrive pipeline.
 *
 * Applied to a source queue and its DLQ (any `IQueue`, defined in CDK or imported), it
 * 1. creates the alarms: `ApproximateNumberOfMessagesVisible >= 1` and
 *    `ApproximateAgeOfOldestMessage` against the DLQ's retention period, both with
 *    `TreatMissingData: notBreaching` (an idle queue stops publishing metrics after about six
 *    hours; a DLQ alarm would otherwise sit in INSUFFICIENT_DATA);
 * 2. routes them to triage (their ARNs join the pipeline's EventBridge rule, and/or the SNS topic
 *    becomes their action);
 * 3. registers the queue: the item `DLQ#<dlqArn>` / `CONFIG` in the pipeline table, validated
 *    with the `QueueRegistration` schema, written on create/update and deleted on delete;
 * 4. grants each pipeline function what the catalogue lists on this DLQ and its source queues
 *    (StartMessageMoveTask only for the move-task function, only on registered DLQs), plus KMS
 *    where the queues are encrypted with a customer managed key.
 *
 * Everything is created in the construct's own stack; grants are separate IAM policies attached
 * to the pipeline's roles, so a MonitoredDlq in another stack (same account and Region) adds no
 * reference from the pipeline stack back to it.
 *
 * @example
 * new MonitoredDlq(this, 'Orders', {
 *   pipeline,
 *   queue: ordersQueue,
 *   dlq: ordersDlq,
 *   owner: 'team-orders',
 *   slackChannel: 'C0123456789',
 *   approvers: ['U0123456789'],
 * });
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/dead-letter-queues-alarms-cloudwatch.html
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html#alarms-and-missing-data
 * @see https://docs.aws.amazon.com/cdk/api/v2/docs/aws-cdk-lib.custom_resources.AwsCustomResource.html
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import {
  type AccessRole,
  checkRegistration,
  type MessageOriginRegistration,
  type QueueRegistration,
  registrationKeys,
  registrationItem as storedRegistrationItem,
} from '@dlq-redrive/contract';
import {
  aws_cloudwatch as cloudwatch,
  custom_resources as cr,
  Duration,
  aws_iam as iam,
  type aws_kms as kms,
  aws_logs as logs,
  Names,
  Stack,
  type aws_s3 as s3,
  aws_sqs as sqs,
  Token,
  Validations,
} from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { dlqWidgets } from './dlq-widgets.js';
import { ValidationError } from './errors.js';
import {
  FUNCTION_ACCESS,
  FUNCTION_NAMES,
  type FunctionName,
  kmsUseOf,
  pascalOf,
} from './function-catalog.js';
import type { IRedrivePipeline } from './pipeline.js';

/** SQS's default retention period (4 days), used when the DLQ's own cannot be read. */
export const SQS_DEFAULT_RETENTION = Duration.days(4);

/** Properties of {@link MonitoredDlq}. Registration fields mirror `QueueRegistration`. */
export interface MonitoredDlqProps {
  /**
   * The pipeline whose triage the alarms reach and whose functions get access: its stack, or one
   * imported with `RedrivePipeline.fromAttributes` (same account and Region).
   */
  readonly pipeline: IRedrivePipeline;
  /** The source queue: the queue whose redrive policy names `dlq`, and where redrives go back to. */
  readonly queue: sqs.IQueue;
  /** The dead-letter queue to watch and redrive. Must be the same type (standard/FIFO) as `queue`. */
  readonly dlq: sqs.IQueue;
  /**
   * Other source queues that dead-letter into the same DLQ (a shared DLQ). Each gets the
   * same grants as `queue`: a move task without DestinationArn sends every message back to its
   * own source.
   * @default - none
   * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html
   */
  readonly additionalSourceQueues?: readonly sqs.IQueue[];
  /**
   * The customer managed KMS key of the DLQ, for a DLQ whose key CDK cannot see (an imported
   * queue). The pipeline's roles are granted KMS use only on registered keys: this one, the
   * sources', and the keys of queues defined with `encryptionMasterKey`; preflight refuses a
   * redrive whose queue key a role cannot use (docs/redrive-workflow.md, "KMS-encrypted queues").
   * @default - `dlq.encryptionMasterKey`, if any
   * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-key-management.html
   */
  readonly dlqEncryptionKey?: kms.IKey;
  /**
   * The customer managed KMS keys of the source queues (redrive destinations) that CDK cannot see
   * (imported queues); see {@link dlqEncryptionKey}.
   * @default - each source queue's `encryptionMasterKey`, if any
   */
  readonly sourceQueueEncryptionKeys?: readonly kms.IKey[];
  /**
   * The S3 buckets the queue's producers offload large payloads to with the SQS Extended Client.
   * Preflight (and its recheck) may HeadObject their objects (`s3:GetObject`) and list them
   * (`s3:ListBucket`, without which S3 answers a gone object with 403 instead of 404), so a
   * message whose payload object is gone is parked instead of redriven; Park and SampleRedrive
   * read preflight's mark on the envelope and get no S3 access. Nothing may delete.
   * @default - none: a pointer to an unregistered bucket refuses the redrive in preflight
   * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-s3-messages.html
   * @see https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadObject.html
   */
  readonly payloadBuckets?: readonly s3.IBucket[];
  /**
   * This DLQ's own parking queue (the registration's `parkingQueueArn`), instead of the pipeline's.
   * Each function is granted on it what the catalogue lists for the parking queue (Park sends,
   * the mover un-parks), and KMS use on `parkingQueueEncryptionKey` or its own key.
   * @default - the pipeline's parking queue
   */
  readonly parkingQueue?: sqs.IQueue;
  /**
   * The customer managed KMS key of {@link parkingQueue} when CDK cannot see it (an imported queue).
   * @default - `parkingQueue.encryptionMasterKey`, if any
   */
  readonly parkingQueueEncryptionKey?: kms.IKey;
  /**
   * Team or person owning the queue (shown in Slack).
   * @default - none
   */
  readonly owner?: string;
  /**
   * Slack channel id approvals and reports go to (e.g. `C0123456789`).
   * @default - none: notifications only reach the logs
   */
  readonly slackChannel?: string;
  /**
   * Slack user ids allowed to approve a redrive of this DLQ.
   * @default [] - nobody can approve from Slack
   */
  readonly approvers?: readonly string[];
  /**
   * Where the producer's own message id lives: a message attribute, or a JSON path in the body.
   * It becomes the idempotency key.
   * @default - a SHA-256 over the source queue ARN, the body and the sorted message attributes
   */
  readonly producerKey?: { readonly attribute: string } | { readonly jsonPath: string };
  /**
   * Messages redriven one by one before the ramp (1..100).
   * @default 5
   */
  readonly sampleSize?: number;
  /**
   * Move task rates of the ramp, messages per second, ascending, each 1..500 (the API's cap).
   * @default [5, 50, 200]
   * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html
   */
  readonly rampRates?: readonly number[];
  /**
   * Seconds at each ramp rate before the health gate (1..3600).
   * @default 60
   */
  readonly dwellSeconds?: number;
  /**
   * Redrive count from which a message is parked instead of redriven (1..100).
   * @default 3
   */
  readonly maxRedrives?: number;
  /**
   * Allow console starts that arrive pre-approved (`approvedBy` in the execution input).
   * @default false
   */
  readonly allowPreApproved?: boolean;
  /**
   * Allow inventorying a DLQ that has its own redrive policy (each inventory receive counts
   * toward that policy's maxReceiveCount).
   * @default false
   */
  readonly allowInventoryOfQueueWithRedrivePolicy?: boolean;
  /**
   * The DLQ's message retention period (60 seconds..14 days); the age alarm's threshold is a
   * fraction of it.
   * @default - read from the DLQ when it is a `Queue` defined in this app, else 4 days (SQS's default)
   * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SetQueueAttributes.html
   */
  readonly dlqRetentionPeriod?: Duration;
  /**
   * Fraction of the retention period (greater than 0, at most 1) the oldest message may reach
   * before the age alarm fires.
   * @default 0.5
   */
  readonly oldestMessageAgeRatio?: number;
  /**
   * What feeds the DLQ when it is not an SQS queue's redrive policy: an SNS subscription
   * (`{ kind: 'sns', topicArn }`), an EventBridge rule target (`{ kind: 'eventbridge', eventBusArn }`)
   * or a Lambda function's async invocations (`{ kind: 'lambda', functionArn }`). The recording mover
   * sends the messages back there; its role is granted `sns:Publish`, `events:PutEvents` or
   * `lambda:InvokeFunction` on exactly that ARN.
   * @default - the DLQ is fed by `queue` (and `additionalSourceQueues`)
   * @see https://docs.aws.amazon.com/sns/latest/dg/sns-dead-letter-queues.html
   */
  readonly origin?: MessageOriginRegistration;
  /**
   * Roles in other accounts (or Regions) the recording mover assumes to reach a destination there
   * (`{ accountId, region?, roleArn, externalId? }`); its role is granted `sts:AssumeRole` on exactly
   * these ARNs. A destination elsewhere without one is refused by name.
   * @default - none: only targets in the pipeline's account and Region
   * @see https://docs.aws.amazon.com/IAM/latest/UserGuide/id_roles_common-scenarios_aws-accounts.html
   */
  readonly accessRoles?: readonly AccessRole[];
  /**
   * Prefix of both alarm names (letters, digits, `-`, `_`, `.`; at most 100 characters).
   * @default 'dlq-redrive-'
   */
  readonly alarmNamePrefix?: string;
}

/** The registration item as written (`pk`, `sk`, then the registration's fields, defaults applied). */
export type RegistrationItem = ReturnType<typeof storedRegistrationItem>;

/** See the file header. */
export class MonitoredDlq extends Construct {
  /** `ApproximateNumberOfMessagesVisible >= 1`. */
  public readonly depthAlarm: cloudwatch.Alarm;
  /** `ApproximateAgeOfOldestMessage >= ratio x retention`. */
  public readonly ageAlarm: cloudwatch.Alarm;
  /** The registration as stored (defaults applied); `dlqArn` may be a token. */
  public readonly registration: RegistrationItem;
  /** The ARNs routed to the pipeline's EventBridge rule (empty with SNS-only delivery). */
  public readonly routedAlarmArns: readonly string[];
  /**
   * This DLQ's dashboard, in the DLQ's own stack: its depth and oldest age beside the pipeline's
   * metrics for it (dimension `DlqName`), so the pipeline stack never refers to this stack.
   */
  public readonly dashboard: cloudwatch.Dashboard;

  public constructor(scope: Construct, id: string, props: MonitoredDlqProps) {
    super(scope, id);
    // Check props, build, wire.
    const checked = validateProps(props, this);
    this.registration = checked.item;
    const { pipeline, dlq } = props;
    const sources = [props.queue, ...(props.additionalSourceQueues ?? [])];

    const stem = `${checked.alarmNamePrefix}${literalQueueName(dlq) ?? Names.uniqueResourceName(this, { maxLength: 120, separator: '-' })}`;
    const action = pipeline.alarmAction();
    this.depthAlarm = new cloudwatch.Alarm(this, 'DepthAlarm', {
      alarmName: `${stem}-visible`,
      alarmDescription: `Messages in DLQ ${dlq.queueArn}: triage (dlq-redrive)`,
      metric: dlq.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(1),
        statistic: 'Maximum',
      }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.ageAlarm = new cloudwatch.Alarm(this, 'AgeAlarm', {
      alarmName: `${stem}-oldest-age`,
      alarmDescription: `Oldest message in DLQ ${dlq.queueArn} has used ${checked.ratio * 100}% of the retention period (${checked.retentionSeconds} s)`,
      metric: dlq.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(5), statistic: 'Maximum' }),
      threshold: Math.floor(checked.retentionSeconds * checked.ratio),
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    const routed: string[] = [];
    for (const alarm of [this.depthAlarm, this.ageAlarm]) {
      const arn = pipeline.routeAlarm(alarmNameOf(alarm), this);
      if (arn !== undefined) routed.push(arn);
      if (action !== undefined) alarm.addAlarmAction(action);
    }
    this.routedAlarmArns = routed;
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `${stem}-redrive`.replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 255),
      widgets: [
        [
          new cloudwatch.GraphWidget({
            title: 'DLQ depth and oldest message age',
            left: [
              dlq.metricApproximateNumberOfMessagesVisible({
                period: Duration.minutes(1),
                statistic: 'Maximum',
              }),
            ],
            right: [
              dlq.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(5), statistic: 'Maximum' }),
            ],
            width: 12,
          }),
          new cloudwatch.AlarmStatusWidget({
            title: 'DLQ alarms',
            alarms: [this.depthAlarm, this.ageAlarm],
            width: 12,
          }),
        ],
        ...dlqWidgets(literalQueueName(dlq) ?? dlq.queueName).map((w) => [w]),
      ],
    });

    this.register(pipeline, checked.item);
    const dlqKeys = [props.dlqEncryptionKey ?? dlq.encryptionMasterKey].flatMap((k) => (k ? [k.keyArn] : []));
    const sourceKeys = [
      ...(props.sourceQueueEncryptionKeys ?? []),
      ...sources.flatMap((q) => (q.encryptionMasterKey ? [q.encryptionMasterKey] : [])),
    ].map((k) => k.keyArn);
    const parkingKeys = [props.parkingQueueEncryptionKey ?? props.parkingQueue?.encryptionMasterKey].flatMap(
      (k) => (k ? [k.keyArn] : []),
    );
    this.grant(
      pipeline,
      { dlq, sources, parking: props.parkingQueue },
      { dlq: dlqKeys, destination: [...new Set(sourceKeys)], parking: parkingKeys },
      props.payloadBuckets ?? [],
      props,
    );
  }

  private register(pipeline: IRedrivePipeline, item: RegistrationItem): void {
    const writer = RegistrationWriter.of(this, pipeline);
    const put: cr.AwsSdkCall = {
      service: 'DynamoDB',
      action: 'putItem',
      parameters: {
        TableName: pipeline.table.tableName,
        Item: marshall(item, { removeUndefinedValues: true }),
      },
      physicalResourceId: cr.PhysicalResourceId.of(item.pk),
    };
    new cr.AwsCustomResource(this, 'Registration', {
      resourceType: 'Custom::DlqRedriveRegistration',
      onCreate: put,
      onUpdate: put,
      onDelete: {
        service: 'DynamoDB',
        action: 'deleteItem',
        parameters: {
          TableName: pipeline.table.tableName,
          Key: marshall({ pk: item.pk, sk: item.sk }),
        },
      },
      role: writer.role,
      installLatestAwsSdk: false,
      logGroup: writer.logGroup,
      timeout: Duration.minutes(2),
    });
    writer.suppressProviderFindings();
  }

  /** The catalogue's queue actions on this DLQ and its sources, and KMS on the registered keys. */
  private grant(
    pipeline: IRedrivePipeline,
    queues: { dlq: sqs.IQueue; sources: readonly sqs.IQueue[]; parking: sqs.IQueue | undefined },
    keyArns: { dlq: readonly string[]; destination: readonly string[]; parking: readonly string[] },
    buckets: readonly s3.IBucket[],
    props: Pick<MonitoredDlqProps, 'origin' | 'accessRoles'>,
  ): void {
    const access = PipelineAccess.of(this, pipeline);
    const { dlq, sources, parking } = queues;
    const allKeys = [...new Set([...keyArns.dlq, ...keyArns.destination, ...keyArns.parking])];
    for (const name of FUNCTION_NAMES) {
      const role = pipeline.roles[name];
      if (role === undefined) continue;
      const profile = FUNCTION_ACCESS[name];
      const use = kmsUseOf(profile);
      const statements: iam.PolicyStatement[] = [];
      if (profile.dlq.length > 0)
        statements.push(new iam.PolicyStatement({ actions: [...profile.dlq], resources: [dlq.queueArn] }));
      if (profile.sourceQueues.length > 0)
        statements.push(
          new iam.PolicyStatement({
            actions: [...profile.sourceQueues],
            resources: sources.map((q) => q.queueArn),
          }),
        );
      if (parking !== undefined && profile.parkingQueue.length > 0)
        statements.push(
          new iam.PolicyStatement({ actions: [...profile.parkingQueue], resources: [parking.queueArn] }),
        );
      for (const cls of ['dlq', 'destination', 'parking'] as const)
        if (use[cls].length > 0 && keyArns[cls].length > 0)
          statements.push(new iam.PolicyStatement({ actions: use[cls], resources: [...keyArns[cls]] }));
      if (profile.keys && profile.keys.length > 0 && allKeys.length > 0)
        statements.push(new iam.PolicyStatement({ actions: [...profile.keys], resources: allKeys }));
      if (profile.payloadBuckets && buckets.length > 0) {
        const onObjects = profile.payloadBuckets.filter((a) => a !== 's3:ListBucket');
        if (onObjects.length > 0)
          statements.push(
            new iam.PolicyStatement({
              actions: onObjects,
              resources: buckets.map((b) => b.arnForObjects('*')),
            }),
          );
        if (profile.payloadBuckets.includes('s3:ListBucket'))
          statements.push(
            new iam.PolicyStatement({
              actions: ['s3:ListBucket'],
              resources: buckets.map((b) => b.bucketArn),
            }),
          );
      }
      const origin = props.origin;
      if (origin && profile.originTargets) {
        const arn =
          origin.kind === 'sns'
            ? origin.topicArn
            : origin.kind === 'eventbridge'
              ? origin.eventBusArn
              : origin.functionArn;
        const actions = profile.originTargets[origin.kind];
        if (actions.length > 0)
          statements.push(new iam.PolicyStatement({ actions: [...actions], resources: [arn] }));
      }
      const roleArns = [...new Set((props.accessRoles ?? []).map((r) => r.roleArn))];
      if (profile.accessRoles && profile.accessRoles.length > 0 && roleArns.length > 0)
        statements.push(new iam.PolicyStatement({ actions: [...profile.accessRoles], resources: roleArns }));
      if (statements.length === 0) continue;
      const policy = access.policyFor(name, role);
      policy.addStatements(...statements);
      if (profile.payloadBuckets && buckets.length > 0)
        Validations.of(policy).acknowledge({
          id: 'AwsSolutions-IAM5',
          reason:
            'Extended-client payload keys are chosen by the producers: HeadObject (s3:GetObject) is granted on the objects of the registered payload buckets only, to tell a gone payload from a present one; nothing may delete.',
        });
    }
  }
}

/** The registration item for the props (exported for tests and the docs). @throws ValidationError */
export function registrationItem(props: MonitoredDlqProps): RegistrationItem {
  return validateProps(props, undefined).item;
}

interface CheckedProps {
  item: RegistrationItem;
  retentionSeconds: number;
  ratio: number;
  alarmNamePrefix: string;
}

/**
 * Checks every prop, collects every problem and throws once.
 * @throws ValidationError listing each bad prop with the allowed range and the value given.
 */
function validateProps(props: MonitoredDlqProps, scope: Construct | undefined): CheckedProps {
  const problems: string[] = [];
  const dlqArn = props.dlq.queueArn;
  const fields = {
    owner: props.owner,
    slackChannel: props.slackChannel,
    approvers: props.approvers === undefined ? undefined : [...props.approvers],
    producerKey: props.producerKey,
    sampleSize: props.sampleSize,
    rampRates: props.rampRates === undefined ? undefined : [...props.rampRates],
    dwellSeconds: props.dwellSeconds,
    maxRedrives: props.maxRedrives,
    allowPreApproved: props.allowPreApproved,
    allowInventoryOfQueueWithRedrivePolicy: props.allowInventoryOfQueueWithRedrivePolicy,
    // Literal source ARNs only (a queue of this app has a token until deploy): the schema refuses
    // a parking queue that is one of them.
    sourceQueueArns: literalArns([props.queue, ...(props.additionalSourceQueues ?? [])]),
    origin: props.origin,
    accessRoles: props.accessRoles === undefined ? undefined : [...props.accessRoles],
    parkingQueueArn: props.parkingQueue?.queueArn,
  };
  const defined = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
  // A DLQ defined in the same app has a token for an ARN; the schema's ARN check runs when it is literal.
  const arnForCheck = Token.isUnresolved(dlqArn)
    ? 'arn:aws:sqs:us-east-1:123456789012:token-placeholder'
    : dlqArn;
  // So is a parking queue of this app: checked as one of the DLQ's account, Region and type.
  const forCheck = { ...defined };
  if (props.parkingQueue !== undefined && Token.isUnresolved(props.parkingQueue.queueArn))
    forCheck.parkingQueueArn = `${arnForCheck.split(':').slice(0, 5).join(':')}:parking-token-placeholder${props.parkingQueue.fifo ? '.fifo' : ''}`;
  const checked = checkRegistration({ dlqArn: arnForCheck, ...forCheck });
  if (!checked.success) {
    for (const p of checked.problems) {
      const given =
        p.field === 'dlqArn' ? dlqArn : p.field === 'parkingQueueArn' ? fields.parkingQueueArn : p.given;
      problems.push(`${p.field}: ${p.message} (given: ${JSON.stringify(given)})`);
    }
  }

  const ratio = props.oldestMessageAgeRatio ?? 0.5;
  if (!(Number.isFinite(ratio) && ratio > 0 && ratio <= 1)) {
    problems.push(`oldestMessageAgeRatio: must be greater than 0 and at most 1 (given: ${ratio})`);
  }
  const retention = props.dlqRetentionPeriod ?? retentionOf(props.dlq) ?? SQS_DEFAULT_RETENTION;
  const retentionSeconds = retention.toSeconds();
  if (!Token.isUnresolved(retentionSeconds) && (retentionSeconds < 60 || retentionSeconds > 1_209_600)) {
    problems.push(
      `dlqRetentionPeriod: must be 60..1209600 seconds (1 minute..14 days) (given: ${retentionSeconds} seconds)`,
    );
  }
  const alarmNamePrefix = props.alarmNamePrefix ?? 'dlq-redrive-';
  if (!/^[A-Za-z0-9_.-]{0,100}$/.test(alarmNamePrefix)) {
    problems.push(
      `alarmNamePrefix: must be at most 100 of A-Z a-z 0-9 _ . - (given: ${JSON.stringify(alarmNamePrefix)})`,
    );
  }
  if (props.queue.fifo !== props.dlq.fifo) {
    problems.push(
      `dlq: must be the same queue type as queue (queue is ${props.queue.fifo ? 'FIFO' : 'standard'}, dlq is ${props.dlq.fifo ? 'FIFO' : 'standard'})`,
    );
  }
  for (const [i, extra] of (props.additionalSourceQueues ?? []).entries()) {
    if (extra.fifo !== props.dlq.fifo) {
      problems.push(
        `additionalSourceQueues[${i}]: must be the same queue type as dlq (${props.dlq.fifo ? 'FIFO' : 'standard'})`,
      );
    }
  }
  if (scope !== undefined) {
    const here = Stack.of(scope);
    const there = props.pipeline;
    for (const dim of ['account', 'region'] as const) {
      const a = here[dim];
      const b = there[dim];
      if (!Token.isUnresolved(a) && !Token.isUnresolved(b) && a !== b) {
        problems.push(
          `${dim}: MonitoredDlq must be in the pipeline's ${dim} (pipeline: ${b}, this stack: ${a})`,
        );
      }
    }
  }
  if (problems.length > 0 || !checked.success) throw new ValidationError('MonitoredDlq', scope, problems);
  const registration: QueueRegistration = {
    ...checked.registration,
    dlqArn,
    ...(fields.parkingQueueArn === undefined ? {} : { parkingQueueArn: fields.parkingQueueArn }),
  };
  return {
    item: storedRegistrationItem(registration),
    retentionSeconds,
    ratio,
    alarmNamePrefix,
  };
}

/** The queues' ARNs that are literal (imported by ARN), or undefined when none is. */
function literalArns(queues: readonly sqs.IQueue[]): string[] | undefined {
  const arns = queues.map((q) => q.queueArn).filter((arn) => !Token.isUnresolved(arn));
  return arns.length > 0 ? arns : undefined;
}

/** A DLQ's retention period when it is a `Queue` of this app with a literal value. */
function retentionOf(queue: sqs.IQueue): Duration | undefined {
  if (!(queue instanceof sqs.Queue)) return undefined;
  const cfn = queue.node.defaultChild as sqs.CfnQueue;
  const seconds = cfn.messageRetentionPeriod;
  return typeof seconds === 'number' && !Token.isUnresolved(seconds)
    ? Duration.seconds(seconds)
    : SQS_DEFAULT_RETENTION;
}

/** A queue's name when it is literal (imported by ARN, or defined with an explicit name). */
function literalQueueName(queue: sqs.IQueue): string | undefined {
  if (!Token.isUnresolved(queue.queueName)) return queue.queueName.replace(/\.fifo$/, '-fifo');
  if (queue instanceof sqs.Queue) {
    const name = (queue.node.defaultChild as sqs.CfnQueue).queueName;
    if (typeof name === 'string' && !Token.isUnresolved(name)) return name.replace(/\.fifo$/, '-fifo');
  }
  return undefined;
}

function alarmNameOf(alarm: cloudwatch.Alarm): string {
  const name = (alarm.node.defaultChild as cloudwatch.CfnAlarm).alarmName;
  if (name === undefined || Token.isUnresolved(name))
    throw new Error(`alarm ${alarm.node.path} has no literal name`);
  return name;
}

/**
 * One per stack: the role and log group of the AwsCustomResource provider that writes
 * registrations. A shared role keeps one small inline policy however many queues the stack
 * registers, scoped to the table and to `DLQ#...` partition keys. The AwsCustomResource provider
 * is a singleton per stack: if another AwsCustomResource in the stack created it first with its
 * own role, that role is the one used, so register queues before adding other AwsCustomResources.
 */
class RegistrationWriter extends Construct {
  public readonly role: iam.Role;
  public readonly logGroup: logs.LogGroup;
  private suppressed = false;
  private readonly tables = new Set<string>();

  /** The stack's writer, allowed to write registrations into this pipeline's table. */
  public static of(scope: Construct, pipeline: IRedrivePipeline): RegistrationWriter {
    const stack = Stack.of(scope);
    const id = 'DlqRedriveRegistrationWriter';
    const writer =
      (stack.node.tryFindChild(id) as RegistrationWriter | undefined) ?? new RegistrationWriter(stack, id);
    writer.allow(pipeline);
    return writer;
  }

  private constructor(scope: Construct, id: string) {
    super(scope, id);
    this.logGroup = new logs.LogGroup(this, 'Logs', { retention: logs.RetentionDays.ONE_MONTH });
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: 'dlq-redrive: writes queue registrations (DLQ#<arn> / CONFIG)',
    });
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [this.logGroup.logGroupArn],
      }),
    );
  }

  /** PutItem/DeleteItem on the pipeline's table, only for `DLQ#...` partition keys (once per pipeline). */
  private allow(pipeline: IRedrivePipeline): void {
    if (this.tables.has(pipeline.node.addr)) return;
    this.tables.add(pipeline.node.addr);
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:PutItem', 'dynamodb:DeleteItem'],
        resources: [pipeline.table.tableArn],
        conditions: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${registrationKeys.pk('')}*`] },
        },
      }),
    );
    pipeline.table.encryptionKey?.grantEncryptDecrypt(this.role);
  }

  /** The provider function is created by the first AwsCustomResource of the stack. */
  public suppressProviderFindings(): void {
    if (this.suppressed) return;
    this.suppressed = true;
    const stack = Stack.of(this);
    const provider = stack.node.tryFindChild(
      `AWS${cr.AwsCustomResource.PROVIDER_FUNCTION_UUID.replace(/-/g, '')}`,
    );
    if (provider === undefined) return;
    Validations.of(provider).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'The AwsCustomResource provider runtime is chosen by aws-cdk-lib (the latest Node.js it knows for the Region); it only runs PutItem/DeleteItem at deploy time.',
    });
  }
}

/**
 * One per stack: an IAM policy per pipeline function holding that stack's queue grants
 * (statements with the same actions merge, so each registered DLQ adds about one ARN per
 * statement). Kept out of the pipeline roles' default policies so the pipeline stack never
 * references queues of other stacks.
 *
 * Inline policies of a role share a 10,240-character quota: roughly 60 registered DLQs per role.
 * @see https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html
 */
class PipelineAccess extends Construct {
  private readonly policies = new Map<FunctionName, iam.Policy>();

  /** The stack's grants to one pipeline's roles (a second pipeline gets its own set). */
  public static of(scope: Construct, pipeline: IRedrivePipeline): PipelineAccess {
    const stack = Stack.of(scope);
    const id = `DlqRedriveAccess${pipeline.stackName.replace(/[^A-Za-z0-9]/g, '')}`;
    return (stack.node.tryFindChild(id) as PipelineAccess | undefined) ?? new PipelineAccess(stack, id);
  }

  public policyFor(name: FunctionName, role: iam.IRole): iam.Policy {
    let policy = this.policies.get(name);
    if (policy === undefined) {
      policy = new iam.Policy(this, pascalOf(name), {
        roles: [role],
        document: new iam.PolicyDocument({ minimize: true }),
      });
      this.policies.set(name, policy);
    }
    return policy;
  }
}
