/**
 * `PipelineFunctions`: one Lambda function per `functions/<name>/handler.ts` (the names of
 * {@link FUNCTION_NAMES}), each a `NodejsFunction` bundled with {@link PIPELINE_BUNDLING}
 * (nodejs22.x, arm64, tracing off) with its own log group and its own role, holding the grants
 * its catalogue entry lists on the table, the parking queue and the account's alarms, plus the
 * self-invoke of the Slack interaction.
 *
 * Grants on the state machine come from {@link RedriveWorkflow}, on the Slack secret from
 * {@link SlackEndpoint}, and on registered queues from {@link MonitoredDlq}: each where the
 * resource is made.
 *
 * @see https://docs.aws.amazon.com/cdk/api/v2/docs/aws-cdk-lib.aws_lambda_nodejs-readme.html
 * @see https://docs.aws.amazon.com/lambda/latest/dg/invocation-async.html#invocation-dlq
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  FUNCTION_ACCESS,
  FUNCTION_NAMES,
  type FunctionName,
  kmsUseOf,
  pascalOf,
} from '@dlq-redrive/cdk/function-catalog';
import {
  Annotations,
  ArnFormat,
  Duration,
  aws_iam as iam,
  aws_lambda as lambda,
  aws_logs as logs,
  aws_lambda_nodejs as nodejs,
  RemovalPolicy,
  Stack,
  type aws_sqs as sqs,
} from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { handlerEntry, PIPELINE_BUNDLING, REPO_ROOT } from '../bundling.js';
import { acknowledge, nagArnPrefix } from '../nag.js';
import type { PipelineTable } from './pipeline-table.js';

/** Properties of {@link PipelineFunctions}. */
export interface PipelineFunctionsProps {
  /** The pipeline table (`TABLE_NAME`, and the grants of each function's `table` access). */
  readonly table: PipelineTable;
  /** The parking queue (`PARKING_QUEUE_URL`, and each function's `parkingQueue` actions). */
  readonly parkingQueue: sqs.IQueue;
  /**
   * Where triage's failed asynchronous invocations go, after Lambda's 2 retries.
   * @see https://docs.aws.amazon.com/lambda/latest/dg/invocation-async.html#invocation-dlq
   */
  readonly asyncFailureQueue: sqs.IQueue;
  /**
   * Directory holding one folder per function (`<name>/handler.ts`); a missing folder is skipped
   * with a warning.
   * @default functions/ of this repository
   */
  readonly functionsDir?: string;
  /**
   * Retention of every function's log group.
   * @default logs.RetentionDays.ONE_MONTH
   * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/Working-with-log-groups-and-streams.html#SettingLogRetention
   */
  readonly logRetention?: logs.RetentionDays;
}

/** See the file header. */
export class PipelineFunctions extends Construct {
  /** One function per function folder that exists. */
  public readonly functions: Partial<Record<FunctionName, nodejs.NodejsFunction>> = {};
  /** Each function's role (the target of {@link MonitoredDlq}'s queue grants). */
  public readonly roles: Partial<Record<FunctionName, iam.Role>> = {};
  /** Function folders listed in the catalogue that have no handler.ts. */
  public readonly missingFunctions: FunctionName[] = [];

  public constructor(scope: Construct, id: string, props: PipelineFunctionsProps) {
    super(scope, id);
    const functionsDir = props.functionsDir ?? join(REPO_ROOT, 'functions');
    const logRetention = props.logRetention ?? logs.RetentionDays.ONE_MONTH;

    for (const name of FUNCTION_NAMES) {
      const entry = handlerEntry(functionsDir, name);
      if (existsSync(entry)) this.build(name, entry, logRetention, props);
      else this.missingFunctions.push(name);
    }
    if (this.missingFunctions.length > 0) {
      Annotations.of(this).addWarningV2(
        'dlq-redrive:missing-functions',
        `No handler.ts yet for: ${this.missingFunctions.join(', ')} (skipped)`,
      );
    }

    for (const [name, fn, role] of this.entries()) this.grant(name, fn, role, props);
  }

  /** Every function that exists, with its name and role, in catalogue order. */
  public entries(): [FunctionName, nodejs.NodejsFunction, iam.Role][] {
    return FUNCTION_NAMES.flatMap((name) => {
      const fn = this.functions[name];
      const role = this.roles[name];
      return fn === undefined || role === undefined ? [] : [[name, fn, role]];
    });
  }

  private build(
    name: FunctionName,
    entry: string,
    logRetention: logs.RetentionDays,
    props: PipelineFunctionsProps,
  ): void {
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
      // Off on purpose (docs/observability.md): the EMF metrics, structured logs and the execution
      // history answer the questions; X-Ray would only see SDK calls nobody instruments.
      tracing: lambda.Tracing.DISABLED,
      logGroup,
      role,
      projectRoot: REPO_ROOT,
      depsLockFilePath: join(REPO_ROOT, 'package-lock.json'),
      environment: {
        TABLE_NAME: props.table.table.tableName,
        PARKING_QUEUE_URL: props.parkingQueue.queueUrl,
        POWERTOOLS_SERVICE_NAME: `dlq-redrive-${name}`,
        POWERTOOLS_METRICS_NAMESPACE: 'DlqRedrive',
        POWERTOOLS_LOG_LEVEL: 'INFO',
        // Stack traces point into the TypeScript sources (the bundles carry source maps).
        NODE_OPTIONS: '--enable-source-maps',
      },
      ...(name === 'triage' ? { deadLetterQueue: props.asyncFailureQueue, retryAttempts: 2 } : {}),
      bundling: PIPELINE_BUNDLING,
      // A version the workflow calls outlives the deploy that replaces it: executions running on
      // an older state machine version still call it (RedriveWorkflow).
      currentVersionOptions: { removalPolicy: RemovalPolicy.RETAIN },
    });
    this.functions[name] = fn;
    this.roles[name] = role;
    acknowledge(fn, {
      id: 'AwsSolutions-L1',
      reason:
        'Pinned to nodejs22.x on purpose: the runtime the bundles target (esbuild target node22) and the project supports; move up deliberately, not by default.',
    });
  }

  /** Table, parking queue, alarm and self-invoke grants, per the catalogue. */
  private grant(
    name: FunctionName,
    fn: nodejs.NodejsFunction,
    role: iam.Role,
    props: PipelineFunctionsProps,
  ): void {
    const access = FUNCTION_ACCESS[name];
    props.table.grant(role, access.table);
    if (access.parkingQueue.length > 0) {
      role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: [...access.parkingQueue],
          resources: [props.parkingQueue.queueArn],
        }),
      );
    }
    const parkingKey = props.parkingQueue.encryptionMasterKey?.keyArn;
    const keyActions = [...kmsUseOf(access).parking, ...(access.keys ?? [])];
    if (parkingKey !== undefined && keyActions.length > 0)
      role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: keyActions, resources: [parkingKey] }));
    if (access.pipelineRoles && access.pipelineRoles.length > 0)
      this.grantKeyUsers(fn, role, access.pipelineRoles);
    if (access.alarms && access.alarms.length > 0) {
      const stack = Stack.of(this);
      role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: [...access.alarms],
          resources: [
            stack.formatArn({
              service: 'cloudwatch',
              resource: 'alarm',
              resourceName: '*',
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          ],
        }),
      );
      acknowledge(role, {
        id: `AwsSolutions-IAM5[Resource::${nagArnPrefix(stack, 'cloudwatch')}alarm:*]`,
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

  /**
   * Preflight's KMS check (docs/redrive-workflow.md, "KMS-encrypted queues"): `PIPELINE_KEY_USERS`
   * names every role that uses a queue key and the KMS actions it needs per queue class (from the
   * catalogue), and the checker may simulate those roles' IAM policies.
   */
  private grantKeyUsers(fn: nodejs.NodejsFunction, role: iam.Role, actions: readonly string[]): void {
    const users = this.entries().flatMap(([name, , user]) => {
      const use = kmsUseOf(FUNCTION_ACCESS[name]);
      if (use.dlq.length + use.destination.length + use.parking.length === 0) return [];
      return [{ function: name, roleArn: user.roleArn, ...use }];
    });
    if (users.length === 0) return;
    fn.addEnvironment('PIPELINE_KEY_USERS', Stack.of(this).toJsonString(users));
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: [...actions], resources: users.map((u) => u.roleArn) }),
    );
  }
}
