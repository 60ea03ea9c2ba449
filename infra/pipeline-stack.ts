/**
 * The deployable pipeline, composed of one construct per concern:
 * - {@link PipelineTable}: the table;
 * - {@link PipelineQueues}: the parking queue and the alarm delivery DLQ (with its alarm);
 * - {@link PipelineFunctions}: one Lambda function per `functions/<name>/` folder, each with its
 *   own role and log group;
 * - {@link SlackEndpoint}: the Slack secret and the interactivity URL (a Function URL);
 * - {@link RedriveWorkflow}: the redrive state machine;
 * - {@link AlarmRouting}: alarm events to triage (EventBridge rule and/or SNS topic) and
 *   execution-ended events to their function;
 * - {@link PipelineMonitoring}: the dashboard of the pipeline's metrics and its alarms (missing
 *   messages, halted runs).
 *
 * Queue access is NOT granted here: {@link MonitoredDlq} (`@dlq-redrive/cdk`) grants each function
 * what it needs on each registered DLQ and its source queues, so no SQS action is ever allowed on
 * `*`. The stack is the package's `IRedrivePipeline`; its `PipelineAttributes` output lets another
 * app of the account import it (`RedrivePipeline.fromAttributes`).
 *
 * The constructs do not take part in logical ids ({@link allocateLogicalId}): every resource
 * keeps the id it had before the stack was split into them, so a deploy updates it in place.
 *
 * @see https://docs.aws.amazon.com/cdk/v2/guide/constructs.html
 * @see https://docs.aws.amazon.com/cdk/api/v2/docs/aws-cdk-lib.aws_lambda_nodejs-readme.html
 */
import { existsSync } from 'node:fs';
import type { IRedrivePipeline, RedrivePipelineAttributes } from '@dlq-redrive/cdk';
import type { FunctionName } from '@dlq-redrive/cdk/function-catalog';
import {
  Annotations,
  type CfnElement,
  CfnOutput,
  type aws_cloudwatch as cloudwatch,
  type aws_cloudwatch_actions as cwActions,
  type aws_dynamodb as dynamodb,
  type aws_events as events,
  type aws_iam as iam,
  type aws_kms as kms,
  type aws_lambda as lambda,
  type aws_logs as logs,
  type aws_lambda_nodejs as nodejs,
  Stack,
  type StackProps,
  type aws_secretsmanager as secretsmanager,
  type aws_stepfunctions as sfn,
  type aws_sns as sns,
  type aws_sqs as sqs,
} from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { DEFAULT_DEFINITION_PATH } from './asl.js';
import { ALARM_DELIVERIES, type AlarmDelivery, AlarmRouting } from './constructs/alarm-routing.js';
import { PipelineFunctions } from './constructs/pipeline-functions.js';
import { PipelineMonitoring } from './constructs/pipeline-monitoring.js';
import { PipelineQueues } from './constructs/pipeline-queues.js';
import { PipelineTable } from './constructs/pipeline-table.js';
import { RedriveWorkflow, redriveWorkflowProblems } from './constructs/redrive-workflow.js';
import { SlackEndpoint, slackEndpointProblems } from './constructs/slack-endpoint.js';
import { flatLogicalId } from './logical-ids.js';
import { oneOfProblem, throwIfInvalid } from './validation.js';

export { REPO_ROOT } from './bundling.js';
export type { AlarmDelivery } from './constructs/alarm-routing.js';

/** Properties of {@link PipelineStack}. */
export interface PipelineStackProps extends StackProps {
  /**
   * How alarm state changes reach triage. `eventbridge`: a rule on "CloudWatch Alarm State Change"
   * events of the alarms the pipeline owns. `sns`: an encrypted topic that {@link MonitoredDlq}
   * adds as the alarms' action. `both`: each transition arrives twice (triage dedupes on alarm
   * ARN + state timestamp).
   * @default 'eventbridge'
   * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch-and-eventbridge.html
   */
  readonly alarmDelivery?: AlarmDelivery;
  /**
   * The complete ARN of an existing Secrets Manager secret holding JSON
   * `{"signingSecret": "...", "botToken": "xoxb-..."}`.
   * @default - a new secret with placeholder values, filled in after the first deploy (docs/deploy.md)
   * @see https://docs.aws.amazon.com/secretsmanager/latest/userguide/reference_secret_json_structure.html
   */
  readonly slackSecretArn?: string;
  /**
   * Retention of every function's and the state machine's log group.
   * @default logs.RetentionDays.ONE_MONTH
   * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/Working-with-log-groups-and-streams.html#SettingLogRetention
   */
  readonly logRetention?: logs.RetentionDays;
  /**
   * A customer managed KMS key for the table.
   * @default - the AWS managed key for DynamoDB (`alias/aws/dynamodb`)
   * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/EncryptionAtRest.html
   */
  readonly tableEncryptionKey?: kms.IKey;
  /**
   * A customer managed KMS key for the parking queue. Park's role is granted
   * `kms:GenerateDataKey` / `kms:Decrypt` on it (and preflight reads it), like the keys
   * {@link MonitoredDlq} registers: the pipeline is granted KMS use only on keys named to it.
   * @default - SSE-SQS (SQS managed keys: no KMS permission involved)
   * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-server-side-encryption.html
   */
  readonly parkingQueueEncryptionKey?: kms.IKey;
  /**
   * Path of the state machine definition (JSONPath ASL with `${...}` placeholders). When the file
   * does not exist the stack has no state machine (with a warning).
   * @default statemachines/redrive.asl.json
   * @see https://docs.aws.amazon.com/step-functions/latest/dg/concepts-amazon-states-language.html
   */
  readonly definitionPath?: string;
  /**
   * Slack channel for approvals of DLQs whose registration names none (`SLACK_DEFAULT_CHANNEL`).
   * @default - none: such a DLQ's approval fails with a message naming `slackChannel`
   * @see https://api.slack.com/methods/chat.postMessage#arg_channel
   */
  readonly slackDefaultChannel?: string;
  /**
   * Directory holding one folder per function (`<name>/handler.ts`).
   * @default functions/
   */
  readonly functionsDir?: string;
  /**
   * Add the rule that sends the redrive state machine's ABORTED, TIMED_OUT and FAILED executions
   * to the `execution-ended` function, which releases a workflow lease the run left behind (an
   * operator stopped it in the console, it timed out, or RecordFailure failed), so its DLQ is not
   * blocked until the lease expires (~49 h). Turn it off only if you release leases another way.
   * @default true
   * @see https://docs.aws.amazon.com/step-functions/latest/dg/cw-events.html
   */
  readonly executionEndedRule?: boolean;
  /**
   * Name of the state machine alias every execution starts through (triage, the CLI, the
   * console): each deploy that changes the definition publishes a version and moves the alias to
   * it, while running executions finish on theirs.
   * @default 'live'
   * @see https://docs.aws.amazon.com/step-functions/latest/dg/concepts-state-machine-alias.html
   */
  readonly workflowAliasName?: string;
}

/** Ids of the constructs the stack is composed of; they do not take part in logical ids. */
const PARTS = {
  table: 'Table',
  queues: 'Queues',
  functions: 'Functions',
  slack: 'Slack',
  workflow: 'Workflow',
  routing: 'Routing',
  monitoring: 'Monitoring',
} as const;
const TRANSPARENT: ReadonlySet<string> = new Set(Object.values(PARTS));
/** Which element holds which logical id, per stack (ids are allocated before fields exist). */
const ALLOCATED = new WeakMap<Stack, Map<string, CfnElement>>();

/** Every problem of the stack's props, one list (each construct checks its own again). */
function pipelineStackProblems(props: PipelineStackProps): string[] {
  return [
    ...oneOfProblem('alarmDelivery', props.alarmDelivery, ALARM_DELIVERIES),
    ...slackEndpointProblems(
      { secretArn: props.slackSecretArn, defaultChannel: props.slackDefaultChannel },
      { secretArn: 'slackSecretArn', defaultChannel: 'slackDefaultChannel' },
    ),
    ...redriveWorkflowProblems({ aliasName: props.workflowAliasName }, 'workflowAliasName'),
  ];
}

/** The redrive pipeline. See the file header. */
export class PipelineStack extends Stack implements IRedrivePipeline {
  /** The single table (keys and index from functions/shared/platform/table.ts). */
  public readonly table: dynamodb.Table;
  /** One function per function folder that exists (missing folders are skipped with a warning). */
  public readonly functions: Partial<Record<FunctionName, nodejs.NodejsFunction>>;
  /** Each function's role (the target of {@link MonitoredDlq}'s queue grants). */
  public readonly roles: Partial<Record<FunctionName, iam.Role>>;
  /** Function folders listed in the catalogue that have no handler.ts yet. */
  public readonly missingFunctions: readonly FunctionName[];
  /** The redrive workflow, when the definition file exists. */
  public readonly stateMachine: sfn.StateMachine | undefined;
  /** The alias executions start through (`STATE_MACHINE_ARN`), when the definition file exists. */
  public readonly stateMachineAlias: sfn.CfnStateMachineAlias | undefined;
  /** Messages kept out of the bulk move (poison, permanent, over maxRedrives). */
  public readonly parkingQueue: sqs.Queue;
  /**
   * Failed deliveries of alarm events to triage (EventBridge target and Lambda async DLQ), and of
   * execution-ended events (EventBridge target of {@link executionEndedRule}).
   */
  public readonly alarmDeliveryDlq: sqs.Queue;
  /** ALARM when an alarm event could not reach triage (the delivery DLQ holds a message). Add your own action. */
  public readonly alarmDeliveryFailureAlarm: cloudwatch.Alarm;
  /** ALARM when the oldest parked message nears the end of its retention (docs/observability.md). Add your own action. */
  public readonly parkingAgeAlarm: cloudwatch.Alarm;
  /** The Slack signing secret and bot token. */
  public readonly slackSecret: secretsmanager.ISecret | secretsmanager.Secret;
  /** The Slack interactivity request URL. */
  public readonly slackInteractionUrl: lambda.FunctionUrl | undefined;
  /** Rule that routes the redrive executions that ended ABORTED/TIMED_OUT/FAILED to `execution-ended`. */
  public readonly executionEndedRule: events.Rule | undefined;
  /** Rule that routes the owned alarms' state changes to triage (`eventbridge` / `both`). */
  public readonly alarmRule: events.Rule | undefined;
  /** Topic the owned alarms notify (`sns` / `both`). */
  public readonly alarmTopic: sns.Topic | undefined;
  /** The pipeline's dashboard and its alarms (missing messages, halted runs). */
  public readonly monitoring: PipelineMonitoring;

  private readonly routing: AlarmRouting;

  public constructor(scope: Construct, id: string, props: PipelineStackProps = {}) {
    super(scope, id, props);
    // Check props.
    throwIfInvalid('PipelineStack', this, pipelineStackProblems(props));
    const definitionPath = props.definitionPath ?? DEFAULT_DEFINITION_PATH;

    // Build.
    const table = new PipelineTable(this, PARTS.table, {
      ...(props.tableEncryptionKey === undefined ? {} : { encryptionKey: props.tableEncryptionKey }),
    });
    const queues = new PipelineQueues(this, PARTS.queues, {
      ...(props.parkingQueueEncryptionKey === undefined
        ? {}
        : { parkingQueueEncryptionKey: props.parkingQueueEncryptionKey }),
    });
    const functions = new PipelineFunctions(this, PARTS.functions, {
      table,
      parkingQueue: queues.parkingQueue,
      asyncFailureQueue: queues.alarmDeliveryDlq,
      ...(props.functionsDir === undefined ? {} : { functionsDir: props.functionsDir }),
      ...(props.logRetention === undefined ? {} : { logRetention: props.logRetention }),
    });
    const slack = new SlackEndpoint(this, PARTS.slack, {
      functions,
      ...(props.slackSecretArn === undefined ? {} : { secretArn: props.slackSecretArn }),
      ...(props.slackDefaultChannel === undefined ? {} : { defaultChannel: props.slackDefaultChannel }),
    });
    let workflow: RedriveWorkflow | undefined;
    if (existsSync(definitionPath)) {
      workflow = new RedriveWorkflow(this, PARTS.workflow, {
        functions,
        definitionPath,
        ...(props.logRetention === undefined ? {} : { logRetention: props.logRetention }),
        ...(props.workflowAliasName === undefined ? {} : { aliasName: props.workflowAliasName }),
      });
    } else {
      Annotations.of(this).addWarningV2(
        'dlq-redrive:missing-definition',
        `No state machine definition at ${definitionPath} (skipped)`,
      );
    }
    const ended = functions.functions['execution-ended'];
    this.routing = new AlarmRouting(this, PARTS.routing, {
      deliveryDlq: queues.alarmDeliveryDlq,
      ...(functions.functions.triage === undefined ? {} : { triage: functions.functions.triage }),
      ...(props.alarmDelivery === undefined ? {} : { delivery: props.alarmDelivery }),
      ...(props.executionEndedRule !== false && ended !== undefined && workflow !== undefined
        ? { executionEnded: { handler: ended, stateMachine: workflow.stateMachine } }
        : {}),
    });

    this.monitoring = new PipelineMonitoring(this, PARTS.monitoring);

    this.table = table.table;
    this.parkingQueue = queues.parkingQueue;
    this.alarmDeliveryDlq = queues.alarmDeliveryDlq;
    this.alarmDeliveryFailureAlarm = queues.alarmDeliveryFailureAlarm;
    this.parkingAgeAlarm = queues.parkingAgeAlarm;
    this.functions = functions.functions;
    this.roles = functions.roles;
    this.missingFunctions = functions.missingFunctions;
    this.slackSecret = slack.secret;
    this.slackInteractionUrl = slack.interactionUrl;
    this.stateMachine = workflow?.stateMachine;
    this.stateMachineAlias = workflow?.alias;
    this.alarmRule = this.routing.alarmRule;
    this.alarmTopic = this.routing.alarmTopic;
    this.executionEndedRule = this.routing.executionEndedRule;

    // Wire: what an operator needs after a deploy.
    this.addOutputs();
  }

  /** See {@link AlarmRouting.routeAlarm}. */
  public routeAlarm(alarmName: string): string | undefined {
    return this.routing.routeAlarm(alarmName);
  }

  /** The SNS alarm action for owned alarms (`sns` / `both`), else undefined. */
  public alarmAction(): cwActions.SnsAction | undefined {
    return this.routing.alarmAction();
  }

  /**
   * Logical ids as if the stack's constructs were not there (see infra/logical-ids.ts).
   * @throws Error when two resources would get the same id.
   */
  protected override allocateLogicalId(element: CfnElement): string {
    const id = flatLogicalId(element, TRANSPARENT);
    const allocated = ALLOCATED.get(this) ?? new Map<string, CfnElement>();
    ALLOCATED.set(this, allocated);
    const holder = allocated.get(id);
    if (holder !== undefined && holder !== element) {
      throw new Error(`logical id ${id} of ${element.node.path} is already ${holder.node.path}'s`);
    }
    allocated.set(id, element);
    return id;
  }

  /** This pipeline as another app of the account imports it (`RedrivePipeline.fromAttributes`). */
  public attributes(): RedrivePipelineAttributes {
    const key = this.table.encryptionKey?.keyArn;
    const triage = this.functions.triage;
    return {
      stackName: this.stackName,
      tableArn: this.table.tableArn,
      ...(key === undefined ? {} : { tableEncryptionKeyArn: key }),
      roleArns: Object.fromEntries(Object.entries(this.roles).map(([name, role]) => [name, role.roleArn])),
      ...(this.alarmRule === undefined || triage === undefined
        ? {}
        : { triageFunctionArn: triage.functionArn }),
      ...(this.alarmTopic === undefined ? {} : { alarmTopicArn: this.alarmTopic.topicArn }),
    };
  }

  /** What an operator needs after a deploy (docs/deploy.md): the Slack request URL, the secret to fill, ... */
  private addOutputs(): void {
    const outputs: Record<string, { value: string | undefined; description: string }> = {
      SlackInteractionUrl: {
        value: this.slackInteractionUrl?.url,
        description: 'Slack app > Interactivity & Shortcuts > Request URL',
      },
      SlackSecretArn: {
        value: this.slackSecret.secretArn,
        description: 'Put {"botToken","signingSecret"} here (aws secretsmanager put-secret-value)',
      },
      StateMachineArn: {
        value: this.stateMachine?.stateMachineArn,
        description: 'The redrive state machine (its executions, versions and aliases)',
      },
      StateMachineAliasArn: {
        value: this.stateMachineAlias?.attrArn,
        description:
          'Start redrives here (STATE_MACHINE_ARN of the CLI; console: the alias > Start execution)',
      },
      TableName: { value: this.table.tableName, description: 'Envelopes, incidents, registrations, ledger' },
      ParkingQueueUrl: {
        value: this.parkingQueue.queueUrl,
        description: 'Messages kept out of the bulk move',
      },
      AlarmDeliveryDlqUrl: {
        value: this.alarmDeliveryDlq.queueUrl,
        description: 'Alarm events that never reached triage',
      },
      PipelineAttributes: {
        value: this.toJsonString(this.attributes()),
        description:
          'RedrivePipeline.fromAttributes of @dlq-redrive/cdk, for MonitoredDlqs of other apps (JSON)',
      },
    };
    for (const [id, { value, description }] of Object.entries(outputs)) {
      if (value !== undefined) new CfnOutput(this, id, { value, description });
    }
  }
}
