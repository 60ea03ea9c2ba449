/**
 * The deployable pipeline: the table, one Lambda function per `functions/<name>/` folder, the
 * redrive state machine, alarm routing (EventBridge rule and/or SNS topic) to triage, the Slack
 * interactivity endpoint (a Function URL), the Slack secret and the parking queue.
 *
 * Queue access is NOT granted here: {@link MonitoredDlq} grants each function what it needs on
 * each registered DLQ and its source queues, so no SQS action is ever allowed on `*`.
 *
 * @see https://docs.aws.amazon.com/cdk/api/v2/docs/aws-cdk-lib.aws_lambda_nodejs-readme.html
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch-and-eventbridge.html
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  Annotations,
  ArnFormat,
  CfnOutput,
  aws_cloudwatch as cloudwatch,
  aws_cloudwatch_actions as cwActions,
  Duration,
  aws_dynamodb as dynamodb,
  aws_events as events,
  aws_iam as iam,
  aws_kms as kms,
  Lazy,
  aws_lambda as lambda,
  aws_logs as logs,
  aws_lambda_nodejs as nodejs,
  RemovalPolicy,
  Stack,
  type StackProps,
  aws_secretsmanager as secretsmanager,
  aws_stepfunctions as sfn,
  aws_sns as sns,
  aws_sqs as sqs,
  aws_sns_subscriptions as subscriptions,
  Token,
  aws_events_targets as targets,
} from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { TABLE } from '#platform/table.js';
import { aslTaskResources, DEFAULT_DEFINITION_PATH, substitutionsFor } from './asl.js';
import { handlerEntry, PIPELINE_BUNDLING, REPO_ROOT } from './bundling.js';
import {
  FUNCTION_ACCESS,
  FUNCTION_NAMES,
  type FunctionName,
  pascalOf,
  placeholderOf,
} from './function-catalog.js';
import { acknowledge } from './nag.js';

export { REPO_ROOT } from './bundling.js';

/** Where alarm transitions reach the triage function. */
export type AlarmDelivery = 'eventbridge' | 'sns' | 'both';

/** Properties of {@link PipelineStack}. */
export interface PipelineStackProps extends StackProps {
  /**
   * How alarm state changes reach triage. `eventbridge`: a rule on "CloudWatch Alarm State Change"
   * events of the alarms the pipeline owns. `sns`: an encrypted topic that {@link MonitoredDlq}
   * adds as the alarms' action. `both`: each transition arrives twice (triage dedupes on alarm
   * ARN + state timestamp, C05).
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
   */
  readonly logRetention?: logs.RetentionDays;
  /**
   * A customer managed KMS key for the table.
   * @default - the AWS managed key for DynamoDB (`alias/aws/dynamodb`)
   * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/EncryptionAtRest.html
   */
  readonly tableEncryptionKey?: kms.IKey;
  /**
   * Path of the state machine definition (JSONPath ASL with `${...}` placeholders).
   * @default statemachines/redrive.asl.json
   */
  readonly definitionPath?: string;
  /**
   * Slack channel id for approvals of DLQs whose registration names none (`SLACK_DEFAULT_CHANNEL`).
   * @default - none: such a DLQ's approval fails with a message naming `slackChannel`
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
}

/** How cdk-nag spells a pseudo parameter in a finding id: `<AWS::Region>`, or the literal value. */
function nagPart(value: string, pseudo: string): string {
  return Token.isUnresolved(value) ? `<${pseudo}>` : value;
}

const XRAY_REASON =
  'X-Ray PutTraceSegments/PutTelemetryRecords do not support resource-level permissions; Resource "*" is the only valid value (added by CDK for Tracing.ACTIVE).';

/** The redrive pipeline. See the file header. */
export class PipelineStack extends Stack {
  /** The single table (keys and index from functions/shared/platform/table.ts). */
  public readonly table: dynamodb.Table;
  /** One function per function folder that exists (missing folders are skipped with a warning). */
  public readonly functions: Partial<Record<FunctionName, nodejs.NodejsFunction>> = {};
  /** Each function's role (the target of {@link MonitoredDlq}'s queue grants). */
  public readonly roles: Partial<Record<FunctionName, iam.Role>> = {};
  /** The redrive workflow, when the definition file exists. */
  public readonly stateMachine: sfn.StateMachine | undefined;
  /** Messages kept out of the bulk move (poison, permanent, over maxRedrives). */
  public readonly parkingQueue: sqs.Queue;
  /**
   * Failed deliveries of alarm events to triage (EventBridge target and Lambda async DLQ), and of
   * execution-ended events (EventBridge target of {@link executionEndedRule}).
   */
  public readonly alarmDeliveryDlq: sqs.Queue;
  /** ALARM when an alarm event could not reach triage (the delivery DLQ holds a message). Add your own action. */
  public readonly alarmDeliveryFailureAlarm: cloudwatch.Alarm;
  /** The Slack signing secret and bot token. */
  public readonly slackSecret: secretsmanager.ISecret | secretsmanager.Secret;
  /** Rule that routes the redrive executions that ended ABORTED/TIMED_OUT/FAILED to `execution-ended`. */
  public readonly executionEndedRule: events.Rule | undefined;
  /** Rule that routes the owned alarms' state changes to triage (`eventbridge` / `both`). */
  public readonly alarmRule: events.Rule | undefined;
  /** Topic the owned alarms notify (`sns` / `both`). */
  public readonly alarmTopic: sns.Topic | undefined;
  /** The Slack interactivity request URL. */
  public readonly slackInteractionUrl: lambda.FunctionUrl | undefined;
  /** Function folders listed in docs/contracts.md that have no handler.ts yet. */
  public readonly missingFunctions: FunctionName[] = [];

  private readonly routedAlarmArns: string[] = [];

  public constructor(scope: Construct, id: string, props: PipelineStackProps = {}) {
    super(scope, id, props);
    const logRetention = props.logRetention ?? logs.RetentionDays.ONE_MONTH;
    const alarmDelivery = props.alarmDelivery ?? 'eventbridge';
    const functionsDir = props.functionsDir ?? join(REPO_ROOT, 'functions');

    this.table = this.buildTable(props.tableEncryptionKey);

    this.parkingQueue = new sqs.Queue(this, 'ParkingQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
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

    this.slackSecret =
      props.slackSecretArn === undefined
        ? this.buildSlackSecret()
        : secretsmanager.Secret.fromSecretCompleteArn(this, 'SlackSecret', props.slackSecretArn);

    // Functions first (the state machine's substitutions need their ARNs).
    for (const name of FUNCTION_NAMES) {
      const entry = handlerEntry(functionsDir, name);
      if (!existsSync(entry)) {
        this.missingFunctions.push(name);
        continue;
      }
      this.buildFunction(name, entry, logRetention);
    }
    if (this.missingFunctions.length > 0) {
      Annotations.of(this).addWarningV2(
        'dlq-redrive:missing-functions',
        `No handler.ts yet for: ${this.missingFunctions.join(', ')} (skipped)`,
      );
    }

    const definitionPath = props.definitionPath ?? DEFAULT_DEFINITION_PATH;
    this.stateMachine = this.buildStateMachine(definitionPath, logRetention);
    this.wireFunctions();
    this.wireApprovalSettings(definitionPath, props.slackDefaultChannel);

    const triage = this.functions.triage;
    if (triage !== undefined && alarmDelivery !== 'sns') this.alarmRule = this.buildAlarmRule(triage);
    if (triage !== undefined && alarmDelivery !== 'eventbridge')
      this.alarmTopic = this.buildAlarmTopic(triage);

    const ended = this.functions['execution-ended'];
    if (props.executionEndedRule !== false && ended !== undefined && this.stateMachine !== undefined) {
      this.executionEndedRule = this.buildExecutionEndedRule(ended, this.stateMachine);
    }

    const slack = this.functions['slack-interaction'];
    if (slack !== undefined) {
      // Slack cannot sign with SigV4; it signs each request with the signing secret, which the
      // handler verifies over the raw body before anything else (C15).
      this.slackInteractionUrl = slack.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.NONE });
    }
    this.addOutputs();
  }

  /**
   * Routes an alarm's state changes to triage: adds its ARN to the rule's event pattern. The ARN
   * is built in this stack from the alarm's literal name, so an alarm in another stack of the same
   * account and Region adds no cross-stack reference.
   *
   * @param alarmName - the alarm's literal name (not a token).
   * @returns the alarm ARN, or undefined when alarms are delivered through SNS only.
   */
  public routeAlarm(alarmName: string): string | undefined {
    if (this.alarmRule === undefined) return undefined;
    const arn = this.formatArn({
      service: 'cloudwatch',
      resource: 'alarm',
      resourceName: alarmName,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    this.routedAlarmArns.push(arn);
    this.alarmRule.addEventPattern({ resources: [arn] });
    return arn;
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
        description: 'Start a redrive from the console with {"dlqArn": ...}',
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
    };
    for (const [id, { value, description }] of Object.entries(outputs)) {
      if (value !== undefined) new CfnOutput(this, id, { value, description });
    }
  }

  /** The SNS alarm action for owned alarms (`sns` / `both`), else undefined. */
  public alarmAction(): cwActions.SnsAction | undefined {
    return this.alarmTopic === undefined ? undefined : new cwActions.SnsAction(this.alarmTopic);
  }

  private buildTable(encryptionKey: kms.IKey | undefined): dynamodb.Table {
    const table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: TABLE.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: TABLE.sortKey, type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TABLE.ttlAttribute,
      ...(encryptionKey === undefined
        ? { encryption: dynamodb.TableEncryption.AWS_MANAGED }
        : { encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED, encryptionKey }),
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    table.addGlobalSecondaryIndex({
      indexName: TABLE.keyIndex.name,
      partitionKey: { name: TABLE.keyIndex.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: TABLE.keyIndex.sortKey, type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.ALL,
    });
    return table;
  }

  private buildSlackSecret(): secretsmanager.Secret {
    const secret = new secretsmanager.Secret(this, 'SlackSecret', {
      description:
        'Slack app credentials for the DLQ redrive pipeline: JSON {"signingSecret", "botToken"}. Replace the placeholders after deploy.',
      generateSecretString: {
        secretStringTemplate: JSON.stringify({ botToken: 'xoxb-REPLACE-ME' }),
        generateStringKey: 'signingSecret',
        excludePunctuation: true,
      },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    acknowledge(secret, {
      id: 'AwsSolutions-SMG4',
      reason:
        'Slack issues the signing secret and bot token; Secrets Manager cannot rotate them. Rotate in the Slack app settings and put the new values here (docs/deploy.md).',
    });
    return secret;
  }

  private buildFunction(name: FunctionName, entry: string, logRetention: logs.RetentionDays): void {
    const access = FUNCTION_ACCESS[name];
    const id = pascalOf(name);
    const logGroup = new logs.LogGroup(this, `${id}Logs`, {
      retention: logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // Own role without the AWSLambdaBasicExecutionRole managed policy: logs go to this log group only.
    const role = new iam.Role(this, `${id}Role`, {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `dlq-redrive ${name}`,
    });
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [logGroup.logGroupArn],
      }),
    );
    const fn = new nodejs.NodejsFunction(this, id, {
      entry,
      handler: 'handler',
      description: `dlq-redrive ${name}: ${access.description}`.slice(0, 256),
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: access.memoryMiB,
      timeout: Duration.seconds(access.timeoutSeconds),
      tracing: lambda.Tracing.ACTIVE,
      logGroup,
      role,
      projectRoot: REPO_ROOT,
      depsLockFilePath: join(REPO_ROOT, 'package-lock.json'),
      environment: {
        TABLE_NAME: this.table.tableName,
        PARKING_QUEUE_URL: this.parkingQueue.queueUrl,
        POWERTOOLS_SERVICE_NAME: `dlq-redrive-${name}`,
        POWERTOOLS_METRICS_NAMESPACE: 'DlqRedrive',
        POWERTOOLS_LOG_LEVEL: 'INFO',
        // Stack traces point into the TypeScript sources (the bundles carry source maps).
        NODE_OPTIONS: '--enable-source-maps',
        ...(access.slackSecret ? { SLACK_SECRET_ARN: this.slackSecret.secretArn } : {}),
      },
      ...(name === 'triage' ? { deadLetterQueue: this.alarmDeliveryDlq, retryAttempts: 2 } : {}),
      bundling: PIPELINE_BUNDLING,
    });
    this.functions[name] = fn;
    this.roles[name] = role;
    acknowledge(role, { id: 'AwsSolutions-IAM5[Resource::*]', reason: XRAY_REASON });
    acknowledge(fn, {
      id: 'AwsSolutions-L1',
      reason:
        'Pinned to nodejs22.x on purpose: the runtime the bundles target (esbuild target node22) and the project supports; move up deliberately, not by default.',
    });
  }

  /** Table, secret, parking queue, state machine and self-invoke grants, per the catalogue. */
  private wireFunctions(): void {
    const tableArns = [this.table.tableArn, `${this.table.tableArn}/index/${TABLE.keyIndex.name}`];
    const readActions = [
      'dynamodb:GetItem',
      'dynamodb:BatchGetItem',
      'dynamodb:Query',
      'dynamodb:ConditionCheckItem',
      'dynamodb:DescribeTable',
    ];
    const writeActions = [
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:DeleteItem',
      'dynamodb:BatchWriteItem',
      // BatchExecuteStatement's UPDATEs (batched envelope observations).
      'dynamodb:PartiQLUpdate',
    ];
    for (const name of FUNCTION_NAMES) {
      const fn = this.functions[name];
      const role = this.roles[name];
      if (fn === undefined || role === undefined) continue;
      const access = FUNCTION_ACCESS[name];
      if (access.table !== 'none') {
        role.addToPrincipalPolicy(
          new iam.PolicyStatement({
            actions: access.table === 'read' ? readActions : [...readActions, ...writeActions],
            resources: tableArns,
          }),
        );
        this.table.encryptionKey?.grantEncryptDecrypt(role);
      }
      if (access.slackSecret) this.slackSecret.grantRead(role);
      if (access.parkingQueue.length > 0) {
        role.addToPrincipalPolicy(
          new iam.PolicyStatement({
            actions: [...access.parkingQueue],
            resources: [this.parkingQueue.queueArn],
          }),
        );
      }
      const sm = this.stateMachine;
      if (sm !== undefined && access.stateMachine.length > 0) {
        role.addToPrincipalPolicy(
          new iam.PolicyStatement({ actions: [...access.stateMachine], resources: [sm.stateMachineArn] }),
        );
        fn.addEnvironment('STATE_MACHINE_ARN', sm.stateMachineArn);
      }
      if (sm !== undefined && access.executions.length > 0) {
        const executions = this.formatArn({
          service: 'states',
          resource: 'execution',
          resourceName: `${sm.stateMachineName}:*`,
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        });
        role.addToPrincipalPolicy(
          new iam.PolicyStatement({ actions: [...access.executions], resources: [executions] }),
        );
        const smId = this.getLogicalId(sm.node.defaultChild as sfn.CfnStateMachine);
        acknowledge(role, {
          id: `AwsSolutions-IAM5[Resource::arn:${nagPart(this.partition, 'AWS::Partition')}:states:${nagPart(this.region, 'AWS::Region')}:${nagPart(this.account, 'AWS::AccountId')}:execution:<${smId}.Name>:*]`,
          reason:
            'Execution ARNs are only known at run time; the wildcard covers executions of this one state machine (DescribeExecution after ExecutionAlreadyExists, C19).',
        });
      }
      if (access.alarms && access.alarms.length > 0) {
        role.addToPrincipalPolicy(
          new iam.PolicyStatement({
            actions: [...access.alarms],
            resources: [
              this.formatArn({
                service: 'cloudwatch',
                resource: 'alarm',
                resourceName: '*',
                arnFormat: ArnFormat.COLON_RESOURCE_NAME,
              }),
            ],
          }),
        );
        acknowledge(role, {
          id: `AwsSolutions-IAM5[Resource::arn:${nagPart(this.partition, 'AWS::Partition')}:cloudwatch:${nagPart(this.region, 'AWS::Region')}:${nagPart(this.account, 'AWS::AccountId')}:alarm:*]`,
          reason:
            "A composite alarm's children are any of the account's alarms; DescribeAlarms only reads their configuration and state.",
        });
      }
      if (access.selfInvoke) {
        // A separate policy: the function's own ARN in its default policy would be a cycle.
        new iam.Policy(this, `${pascalOf(name)}SelfInvoke`, {
          roles: [role],
          statements: [
            new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [fn.functionArn] }),
          ],
        });
      }
    }
  }

  /**
   * The approval record's TTL must outlive the task token: request-approval reads the approval
   * state's TimeoutSeconds from `APPROVAL_TIMEOUT_SECONDS`, taken here from the definition itself.
   */
  private wireApprovalSettings(definitionPath: string, slackDefaultChannel: string | undefined): void {
    const fn = this.functions['request-approval'];
    if (fn === undefined) return;
    if (existsSync(definitionPath)) {
      const definition = JSON.parse(readFileSync(definitionPath, 'utf8')) as {
        States?: Record<string, { TimeoutSeconds?: unknown }>;
      };
      const timeout = definition.States?.RequestApproval?.TimeoutSeconds;
      if (typeof timeout === 'number') fn.addEnvironment('APPROVAL_TIMEOUT_SECONDS', String(timeout));
    }
    if (slackDefaultChannel !== undefined) fn.addEnvironment('SLACK_DEFAULT_CHANNEL', slackDefaultChannel);
  }

  private buildStateMachine(
    definitionPath: string,
    logRetention: logs.RetentionDays,
  ): sfn.StateMachine | undefined {
    if (!existsSync(definitionPath)) {
      Annotations.of(this).addWarningV2(
        'dlq-redrive:missing-definition',
        `No state machine definition at ${definitionPath} (skipped)`,
      );
      return undefined;
    }
    const text = readFileSync(definitionPath, 'utf8');
    const available: Record<string, string> = {};
    const invoked: lambda.IFunction[] = [];
    for (const name of FUNCTION_NAMES) {
      const fn = this.functions[name];
      if (fn !== undefined) available[placeholderOf(name)] = fn.functionArn;
    }
    const substitutions = substitutionsFor(text, available);
    for (const name of FUNCTION_NAMES) {
      const fn = this.functions[name];
      if (fn !== undefined && substitutions[placeholderOf(name)] !== undefined) invoked.push(fn);
    }
    const unsupported = aslTaskResources(JSON.parse(text)).filter(
      (resource) =>
        !/^\$\{[A-Za-z0-9]+FunctionArn\}$/.test(resource) &&
        resource !== 'arn:aws:states:::lambda:invoke' &&
        resource !== 'arn:aws:states:::lambda:invoke.waitForTaskToken',
    );
    if (unsupported.length > 0) {
      throw new Error(
        `statemachines/redrive.asl.json calls Task resources the stack grants nothing for: ${unsupported.join(', ')}`,
      );
    }

    const logGroup = new logs.LogGroup(this, 'RedriveWorkflowLogs', {
      retention: logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const stateMachine = new sfn.StateMachine(this, 'RedriveWorkflow', {
      stateMachineType: sfn.StateMachineType.STANDARD,
      definitionBody: sfn.DefinitionBody.fromFile(definitionPath),
      definitionSubstitutions: substitutions,
      tracingEnabled: true,
      // Execution data holds ids and counts only, but the approval task's input carries a task
      // token: keep it out of the logs.
      logs: { destination: logGroup, level: sfn.LogLevel.ALL, includeExecutionData: false },
    });
    // Unqualified ARNs only: the definition calls functions by ARN, never a version or alias.
    stateMachine.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['lambda:InvokeFunction'],
        resources: invoked.map((fn) => fn.functionArn),
      }),
    );
    acknowledge(stateMachine, {
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Resource "*" only for CloudWatch Logs vended-log delivery (logs:CreateLogDelivery, GetLogDelivery, ...; no resource-level permissions) and X-Ray tracing, both added by CDK for logging and tracing. Lambda invoke is scoped to the listed function ARNs.',
    });
    return stateMachine;
  }

  private buildAlarmRule(triage: lambda.IFunction): events.Rule {
    const rule = new events.Rule(this, 'AlarmStateChangeRule', {
      description:
        'State changes of the DLQ alarms the pipeline owns -> triage. Only "CloudWatch Alarm State Change": configuration changes never reach triage (C01).',
      eventPattern: {
        source: ['aws.cloudwatch'],
        detailType: ['CloudWatch Alarm State Change'],
      },
      targets: [
        new targets.LambdaFunction(triage, {
          deadLetterQueue: this.alarmDeliveryDlq,
          retryAttempts: 8,
          maxEventAge: Duration.hours(2),
        }),
      ],
    });
    // With no alarm routed yet the pattern would match every alarm in the account: keep it off.
    (rule.node.defaultChild as events.CfnRule).state = Lazy.string({
      produce: () => (this.routedAlarmArns.length > 0 ? 'ENABLED' : 'DISABLED'),
    });
    return rule;
  }

  /**
   * "Step Functions Execution Status Change" events of the redrive state machine that end a run
   * without success -> `execution-ended`. Failed deliveries go to the alarm-delivery DLQ (its
   * alarm fires).
   * @see https://docs.aws.amazon.com/step-functions/latest/dg/cw-events.html
   */
  private buildExecutionEndedRule(fn: lambda.IFunction, stateMachine: sfn.StateMachine): events.Rule {
    return new events.Rule(this, 'ExecutionEndedRule', {
      description:
        'Redrive executions that ended ABORTED, TIMED_OUT or FAILED -> execution-ended (releases a workflow lease left behind).',
      eventPattern: {
        source: ['aws.states'],
        detailType: ['Step Functions Execution Status Change'],
        detail: {
          stateMachineArn: [stateMachine.stateMachineArn],
          status: ['ABORTED', 'TIMED_OUT', 'FAILED'],
        },
      },
      targets: [
        new targets.LambdaFunction(fn, {
          deadLetterQueue: this.alarmDeliveryDlq,
          retryAttempts: 8,
          maxEventAge: Duration.hours(2),
        }),
      ],
    });
  }

  private buildAlarmTopic(triage: lambda.IFunction): sns.Topic {
    // CloudWatch can publish to an encrypted topic only with a customer managed key whose policy
    // lets cloudwatch.amazonaws.com use it.
    const key = new kms.Key(this, 'AlarmTopicKey', {
      enableKeyRotation: true,
      description: 'dlq-redrive alarm topic',
      removalPolicy: RemovalPolicy.DESTROY,
    });
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: { StringEquals: { 'aws:SourceAccount': this.account } },
      }),
    );
    const topic = new sns.Topic(this, 'AlarmTopic', { masterKey: key, enforceSSL: true });
    topic.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': this.account },
          ArnLike: {
            'aws:SourceArn': this.formatArn({
              service: 'cloudwatch',
              resource: 'alarm',
              resourceName: '*',
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          },
        },
      }),
    );
    topic.addSubscription(
      new subscriptions.LambdaSubscription(triage, { deadLetterQueue: this.alarmDeliveryDlq }),
    );
    return topic;
  }
}
