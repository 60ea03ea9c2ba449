/**
 * The pipeline's Lambda functions (one per `functions/<name>/` folder, see docs/contracts.md) and
 * what each one may touch. The stack turns every entry into a NodejsFunction with its own role
 * holding exactly the access listed here; test/infra/call-sites.test.ts judges every call each
 * function's code makes, by action and resource ARN, against the roles as synthesized, and
 * test/infra/pipeline-stack.test.ts that no function folder is missing from the list.
 *
 * SQS actions are split by queue class because the ARNs differ: registered DLQs, their source
 * queues (the redrive destinations) and the pipeline's parking queue. Grants on DLQs and source
 * queues are added per registered queue by {@link MonitoredDlq}; nothing is granted on `*`.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-api-permissions-reference.html
 * @see https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonsqs.html
 */

/** Logical function names: the folder names under `functions/`. */
export const FUNCTION_NAMES = [
  'triage',
  'validate-input',
  'preflight',
  'request-approval',
  'park',
  'sample-redrive',
  'verify-sample',
  'continue-inventory',
  'move-task',
  'reconcile',
  'notify',
  'slack-interaction',
  'execution-ended',
  'mover',
  'approval-reminder',
] as const;
export type FunctionName = (typeof FUNCTION_NAMES)[number];

/** Access to the pipeline table: none, reads only, or reads and writes (items and the key index). */
export type TableAccess = 'none' | 'read' | 'readWrite';

/** What one function may do. Every list holds IAM action names (`service:Action`). */
export interface FunctionAccess {
  /** Actions on every registered DLQ. */
  readonly dlq: readonly string[];
  /**
   * KMS actions on a registered DLQ's key, where they do not follow from {@link dlq} (a function
   * that only cancels move tasks holds ReceiveMessage for the API's sake but reads no body).
   * @default - from `dlq`, by {@link kmsUseOf}
   */
  readonly dlqKeyUse?: readonly string[];
  /** Actions on the source queues of every registered DLQ (redrive destinations). */
  readonly sourceQueues: readonly string[];
  /** Actions on the pipeline's parking queue. */
  readonly parkingQueue: readonly string[];
  readonly table: TableAccess;
  /** Read the Slack secret (signing secret and bot token). */
  readonly slackSecret: boolean;
  /** Actions on the redrive state machine (`states:StartExecution`, task callbacks). */
  readonly stateMachine: readonly string[];
  /** Actions on the redrive state machine's executions (`states:DescribeExecution`). */
  readonly executions: readonly string[];
  /**
   * Actions on the account's CloudWatch alarms (`arn:...:alarm:*`): triage reads a composite
   * alarm's triggering children with DescribeAlarms. @default - none
   */
  readonly alarms?: readonly string[];
  /**
   * Actions on every registered KMS key itself (not key use through SQS, which follows from the
   * SQS actions: {@link kmsUseOf}): preflight reads each queue's key. @default - none
   */
  readonly keys?: readonly string[];
  /**
   * Actions on the roles of the functions that use queue keys: preflight simulates their IAM
   * policies (`iam:SimulatePrincipalPolicy`). @default - none
   */
  readonly pipelineRoles?: readonly string[];
  /**
   * Actions on registered extended-client payload buckets (MonitoredDlq `payloadBuckets`), for
   * preflight only (it marks gone payloads on their envelopes for Park and SampleRedrive):
   * HeadObject is authorised as `s3:GetObject` on the objects, and `s3:ListBucket` on the bucket
   * makes S3 answer a gone object with 404 instead of 403. Never a delete. @default - none
   */
  readonly payloadBuckets?: readonly string[];
  /**
   * Actions on each registered DLQ's registered origin (`QueueRegistration.origin`), by kind: the
   * recording mover publishes to the SNS topic, puts events on the bus, invokes the function.
   * Granted per registration by {@link MonitoredDlq}, never on `*`. @default - none
   */
  readonly originTargets?: {
    readonly sns: readonly string[];
    readonly eventbridge: readonly string[];
    readonly lambda: readonly string[];
  };
  /**
   * Actions on each registered DLQ's registered access roles (`QueueRegistration.accessRoles`):
   * the recording mover assumes them to reach a target in another account or Region. Granted per
   * registration by {@link MonitoredDlq}, on exactly those role ARNs. @default - none
   */
  readonly accessRoles?: readonly string[];
  /** The function invokes itself asynchronously (Slack's 3-second acknowledgement, then work). */
  readonly selfInvoke: boolean;
  /** Timeout, seconds. */
  readonly timeoutSeconds: number;
  /** Memory, MiB. */
  readonly memoryMiB: number;
  /** One line for the function's description. */
  readonly description: string;
}

/**
 * Actions a move task needs on its source (the DLQ) besides `sqs:StartMessageMoveTask`: the SQS
 * permissions reference lists `sqs:ReceiveMessage`, `sqs:DeleteMessage` and
 * `sqs:GetQueueAttributes` on the DLQ for StartMessageMoveTask and CancelMessageMoveTask, and
 * `sqs:SendMessage` on the destination queue (here: the source queues, or a custom destination
 * that is itself a registered source queue).
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-api-permissions-reference.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-configure-dead-letter-queue-redrive.html
 */
export const MOVE_TASK_DLQ_ACTIONS = [
  'sqs:StartMessageMoveTask',
  'sqs:ListMessageMoveTasks',
  'sqs:CancelMessageMoveTask',
  'sqs:ReceiveMessage',
  'sqs:DeleteMessage',
  'sqs:GetQueueAttributes',
  'sqs:GetQueueUrl',
] as const;

/**
 * What cancelling a move task needs on its source (the DLQ): the SQS permissions reference lists
 * `sqs:ReceiveMessage`, `sqs:DeleteMessage` and `sqs:GetQueueAttributes` for CancelMessageMoveTask
 * besides the action itself; ListMessageMoveTasks finds the task to cancel.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-api-permissions-reference.html
 */
export const MOVE_TASK_CANCEL_ACTIONS = [
  'sqs:ListMessageMoveTasks',
  'sqs:CancelMessageMoveTask',
  'sqs:ReceiveMessage',
  'sqs:DeleteMessage',
  'sqs:GetQueueAttributes',
] as const;

/** What a move task needs on its destination queue (the source queues here). See {@link MOVE_TASK_DLQ_ACTIONS}. */
export const MOVE_TASK_DESTINATION_ACTIONS = ['sqs:SendMessage'] as const;

/** SQS actions that read message bodies: a KMS-encrypted queue also needs `kms:Decrypt`. */
export const SQS_ACTIONS_NEEDING_DECRYPT = ['sqs:ReceiveMessage', 'sqs:StartMessageMoveTask'] as const;
/** SQS actions that write messages: a KMS-encrypted queue also needs `kms:GenerateDataKey` and `kms:Decrypt`. */
export const SQS_ACTIONS_NEEDING_DATA_KEY = ['sqs:SendMessage'] as const;

const none: readonly string[] = [];

/** What a function that checks extended-client payloads needs on a registered bucket. */
export const PAYLOAD_BUCKET_ACTIONS: readonly string[] = ['s3:GetObject', 's3:ListBucket'];

/** The KMS actions SQS needs for a caller of these SQS actions on a queue with a customer managed key. */
function kmsUseOfQueue(sqsActions: readonly string[]): string[] {
  const writes = sqsActions.some((a) => (SQS_ACTIONS_NEEDING_DATA_KEY as readonly string[]).includes(a));
  const reads = sqsActions.some((a) => (SQS_ACTIONS_NEEDING_DECRYPT as readonly string[]).includes(a));
  return writes ? ['kms:GenerateDataKey', 'kms:Decrypt'] : reads ? ['kms:Decrypt'] : [];
}

/**
 * The KMS actions a function needs on the key of each queue class, from its SQS actions: receiving
 * (and starting a move task) decrypts, sending generates a data key and decrypts. The stack grants
 * them on registered keys and hands them to preflight (`PIPELINE_KEY_USERS`), which checks them
 * against every queue's key before approval.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-key-management.html
 */
export function kmsUseOf(access: FunctionAccess): {
  dlq: string[];
  destination: string[];
  parking: string[];
} {
  return {
    dlq: access.dlqKeyUse === undefined ? kmsUseOfQueue(access.dlq) : [...access.dlqKeyUse],
    destination: kmsUseOfQueue(access.sourceQueues),
    parking: kmsUseOfQueue(access.parkingQueue),
  };
}

/**
 * What a function may do unless its entry says otherwise: nothing on any queue or on the state
 * machine, no Slack secret, no self-invocation. Each entry of {@link FUNCTION_ACCESS} names only
 * what it is granted.
 */
const NO_ACCESS = {
  dlq: none,
  sourceQueues: none,
  parkingQueue: none,
  slackSecret: false,
  stateMachine: none,
  executions: none,
  selfInvoke: false,
} as const satisfies Partial<FunctionAccess>;

/** An entry of the catalog: a {@link FunctionAccess} whose grants default to {@link NO_ACCESS}. */
type CatalogEntry = Omit<FunctionAccess, keyof typeof NO_ACCESS> & Partial<FunctionAccess>;

const CATALOG: Readonly<Record<FunctionName, CatalogEntry>> = {
  triage: {
    description: 'Alarm transition -> inventory of the DLQ into envelopes, incident, workflow start',
    dlq: [
      'sqs:ReceiveMessage',
      'sqs:ChangeMessageVisibility',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
      'sqs:ListDeadLetterSourceQueues',
    ],
    sourceQueues: ['sqs:GetQueueAttributes'],
    table: 'readWrite',
    // Notifications (unresolvable, refused, partial, systemic, alarm-cleared) go to Slack via
    // sharedNotifier() when SLACK_SECRET_ARN is set.
    slackSecret: true,
    stateMachine: ['states:StartExecution'],
    // Starting an execution whose name exists already is answered by describing it.
    executions: ['states:DescribeExecution'],
    // A composite alarm's triggering children are resolved to their queues (docs/triage.md).
    alarms: ['cloudwatch:DescribeAlarms'],
    timeoutSeconds: 300,
    memoryMiB: 1024,
  },
  'validate-input': {
    description: 'ValidateInput: execution input -> normalised plan',
    dlq: ['sqs:GetQueueUrl'],
    // A custom destination (the shared-DLQ override) is resolved to its URL too.
    sourceQueues: ['sqs:GetQueueUrl'],
    // A registration may name its own parking queue; the pipeline's is resolved the same way.
    parkingQueue: ['sqs:GetQueueUrl'],
    table: 'readWrite',
    timeoutSeconds: 30,
    memoryMiB: 512,
  },
  preflight: {
    description:
      'Preflight / CheckDlqStillHasMessages: DLQ depth, sources, active move tasks, retention headroom',
    dlq: [
      'sqs:GetQueueUrl',
      'sqs:GetQueueAttributes',
      'sqs:ListDeadLetterSourceQueues',
      'sqs:ListMessageMoveTasks',
      // The recheck inventories messages that reached the DLQ after triage (late arrivals).
      'sqs:ReceiveMessage',
      'sqs:ChangeMessageVisibility',
    ],
    sourceQueues: ['sqs:GetQueueUrl', 'sqs:GetQueueAttributes'],
    // The parking queue's KmsMasterKeyId (check 6a).
    parkingQueue: ['sqs:GetQueueAttributes'],
    // Reads envelopes; writes the DLQ's workflow lease (PutItem, conditional).
    table: 'readWrite',
    // Check 6a: each queue's key (state, key policy) and the users' IAM policies (docs/redrive-workflow.md).
    keys: ['kms:DescribeKey', 'kms:GetKeyPolicy'],
    pipelineRoles: ['iam:SimulatePrincipalPolicy'],
    // HeadObject of extended-client payloads (gone -> parked), docs/redrive-workflow.md.
    payloadBuckets: PAYLOAD_BUCKET_ACTIONS,
    // The recheck's inventory of late arrivals runs within the remaining time.
    timeoutSeconds: 300,
    memoryMiB: 1024,
  },
  'request-approval': {
    description: 'RequestApproval: posts the Slack approval and stores the task token server-side',
    table: 'readWrite',
    slackSecret: true,
    timeoutSeconds: 30,
    memoryMiB: 512,
  },
  park: {
    description: 'Park: moves poison/permanent messages to the parking queue (or discards on request)',
    // GetQueueAttributes: a target still missing after the scan is only gone when nothing is in flight.
    dlq: [
      'sqs:GetQueueUrl',
      'sqs:GetQueueAttributes',
      'sqs:ReceiveMessage',
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
    ],
    // GetQueueAttributes: the parking queue's MaximumMessageSize bounds what is sent there.
    parkingQueue: ['sqs:GetQueueUrl', 'sqs:GetQueueAttributes', 'sqs:SendMessage'],
    table: 'readWrite',
    // PARK_TIMEOUT_SECONDS: one scan of a DLQ up to the hold limit (110,000 messages).
    timeoutSeconds: 900,
    memoryMiB: 1024,
  },
  'sample-redrive': {
    description: 'SampleRedrive: record, send, delete a handful of messages one by one',
    dlq: [
      'sqs:GetQueueUrl',
      'sqs:GetQueueAttributes',
      'sqs:ReceiveMessage',
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
    ],
    sourceQueues: ['sqs:GetQueueUrl', 'sqs:GetQueueAttributes', 'sqs:SendMessage'],
    table: 'readWrite',
    timeoutSeconds: 120,
    memoryMiB: 512,
  },
  'verify-sample': {
    description: 'VerifySample: did the samples come back to the DLQ, were they processed',
    dlq: ['sqs:GetQueueUrl', 'sqs:GetQueueAttributes', 'sqs:ReceiveMessage', 'sqs:ChangeMessageVisibility'],
    table: 'readWrite',
    timeoutSeconds: 300,
    memoryMiB: 1024,
  },
  'continue-inventory': {
    description:
      'ContinueInventory: one bounded step of an inventory that spans invocations (holds what it saw, releases it at the end)',
    // Receives (holding), extends or releases held messages, reads the DLQ's attributes.
    dlq: ['sqs:GetQueueAttributes', 'sqs:ReceiveMessage', 'sqs:ChangeMessageVisibility'],
    sourceQueues: none,
    parkingQueue: none,
    // Envelopes, the inventory session and its hold pages, the incident's summary, the inventory lease.
    table: 'readWrite',
    // A systemic failure found when the inventory completes is announced like triage's.
    slackSecret: true,
    stateMachine: none,
    executions: none,
    selfInvoke: false,
    timeoutSeconds: 300,
    memoryMiB: 1024,
  },
  'move-task': {
    description: 'StartMoveTask / CheckProgress / StepUp / ResumeRamp: the ramped StartMessageMoveTask',
    // Plus the gate's inventory of late arrivals (receive, then release with ChangeMessageVisibility).
    dlq: [...MOVE_TASK_DLQ_ACTIONS, 'sqs:ChangeMessageVisibility'],
    sourceQueues: [...MOVE_TASK_DESTINATION_ACTIONS, 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'],
    table: 'readWrite',
    // The ramp's progress message in the incident's Slack thread (move-task/slack-progress.ts), when
    // SLACK_SECRET_ARN is set.
    slackSecret: true,
    // The gate HeadObjects late arrivals' extended-client pointers (gone -> parked), like Preflight.
    payloadBuckets: PAYLOAD_BUCKET_ACTIONS,
    // A gate check may stop the task (up to 20 s) and inventory the DLQ within its remaining time.
    timeoutSeconds: 300,
    memoryMiB: 1024,
  },
  reconcile: {
    description: 'Reconcile: every inventoried envelope in exactly one state, counts add up',
    // A final inventory of what is still in the DLQ, and the move tasks' last status.
    dlq: [
      'sqs:GetQueueUrl',
      'sqs:GetQueueAttributes',
      'sqs:ReceiveMessage',
      'sqs:ChangeMessageVisibility',
      'sqs:ListMessageMoveTasks',
    ],
    table: 'readWrite',
    timeoutSeconds: 300,
    memoryMiB: 1024,
  },
  notify: {
    description: 'Notify / RecordFailure: outcome to Slack (or the logs) and the incident record',
    // RecordFailure cancels a move task its run started and can no longer supervise.
    dlq: MOVE_TASK_CANCEL_ACTIONS,
    // Cancelling reads no message: no key use.
    dlqKeyUse: none,
    table: 'readWrite',
    // docs/contracts.md (Slack): Notify takes its notifier from sharedNotifier(), Slack when
    // SLACK_SECRET_ARN is set.
    slackSecret: true,
    timeoutSeconds: 30,
    memoryMiB: 512,
  },
  'slack-interaction': {
    description:
      'Slack interactivity (Function URL): verifies the signature, records the decision or cancel request, answers the task token',
    table: 'readWrite',
    slackSecret: true,
    // Approve and reject both answer with SendTaskSuccess (the decision is in the output).
    stateMachine: ['states:SendTaskSuccess'],
    selfInvoke: true,
    timeoutSeconds: 30,
    memoryMiB: 512,
  },
  'execution-ended': {
    description:
      'EventBridge: a redrive execution ended ABORTED/TIMED_OUT/FAILED -> release its workflow lease, notify',
    // It cancels a move task the ended execution started that still runs unsupervised.
    dlq: MOVE_TASK_CANCEL_ACTIONS,
    // Cancelling reads no message: no key use.
    dlqKeyUse: none,
    // Reads the lease (GetItem) and the incident; deletes the lease (conditional DeleteItem);
    // records the run's end on the incident when Notify did not (UpdateItem).
    table: 'readWrite',
    // Notifies through sharedNotifier() like notify: Slack when SLACK_SECRET_ARN is set.
    slackSecret: true,
    timeoutSeconds: 30,
    memoryMiB: 256,
  },
  mover: {
    description:
      'MoverSample / MoverStep: the recording mover (selection, un-park, edits, SNS/EventBridge/Lambda origins, other accounts)',
    // Receive, hold (visibility), delete what moved, and describe the DLQ.
    dlq: [
      'sqs:GetQueueUrl',
      'sqs:GetQueueAttributes',
      'sqs:ReceiveMessage',
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
    ],
    // SendMessageBatch to the source queue (or a registered destination), and its MaximumMessageSize.
    sourceQueues: ['sqs:GetQueueUrl', 'sqs:GetQueueAttributes', 'sqs:SendMessage'],
    // Un-park: parked messages are received from the parking queue (described first) and deleted
    // once sent back.
    parkingQueue: [
      'sqs:GetQueueAttributes',
      'sqs:ReceiveMessage',
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
    ],
    originTargets: {
      sns: ['sns:Publish'],
      eventbridge: ['events:PutEvents'],
      lambda: ['lambda:InvokeFunction'],
    },
    accessRoles: ['sts:AssumeRole'],
    table: 'readWrite',
    // Each step moves for one dwell (or what is left of this) and returns: the workflow loops.
    timeoutSeconds: 300,
    memoryMiB: 1024,
  },
  'approval-reminder': {
    description:
      'Scheduled check: a waiting approval whose retention deadline is near gets one reminder in its Slack thread',
    // Lists approvals owing a reminder (index query), takes each with a conditional update.
    table: 'readWrite',
    slackSecret: true,
    timeoutSeconds: 60,
    memoryMiB: 256,
  },
};

/** The access of every function, from what its code calls (see the test in test/infra). */
export const FUNCTION_ACCESS: Readonly<Record<FunctionName, FunctionAccess>> = Object.fromEntries(
  FUNCTION_NAMES.map((name) => [name, { ...NO_ACCESS, ...CATALOG[name] }]),
) as Record<FunctionName, FunctionAccess>;

/** `validate-input` -> `ValidateInputFunctionArn`: the ASL placeholder of a function (docs/contracts.md). */
export function placeholderOf(name: FunctionName): string {
  const pascal = name
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
  return `${pascal}FunctionArn`;
}

/** `validate-input` -> `ValidateInput`: the construct id and name stem of a function. */
export function pascalOf(name: FunctionName): string {
  return placeholderOf(name).replace(/FunctionArn$/, '');
}
