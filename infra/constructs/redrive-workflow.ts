/**
 * `RedriveWorkflow`: the redrive state machine from `statemachines/redrive.asl.json` (JSONPath
 * ASL; every `${XFunctionArn}` placeholder is a function's ARN, and the synth fails naming any
 * placeholder without a function), Standard type, logs at level ALL without execution data (the
 * approval task's input carries a task token); no X-Ray tracing (docs/observability.md). Its role
 * may invoke exactly the functions the definition names, and start an execution of this state
 * machine through its alias (a run that continues in a new execution before the 25,000-event
 * history limit). Its log group is under `/aws/vendedlogs/states/`.
 *
 * Safe upgrades: an execution finishes on the definition and the function code it started with.
 * - Every deploy that changes a function publishes a Lambda version of it (`currentVersion`,
 *   retained), and the definition calls those versions, not `$LATEST`.
 * - Every deploy that changes the definition publishes a state machine version (retained), and
 *   the alias ({@link aliasName}, `live` by default) routes all new executions to it.
 * - Everything that starts executions starts them through the alias: its ARN is in
 *   `STATE_MACHINE_ARN`, and the start permission is scoped to it
 *   (`states:StateMachineQualifier`).
 * A run parked at the approval task while a new definition is deployed keeps running on its own
 * version, which keeps calling the Lambda versions of its deploy; the task token (answered by
 * the Slack interaction with SendTaskSuccess) belongs to that execution, whatever the alias points
 * to now. Running executions of an older version go on even when that version is deleted.
 *
 * It also wires the functions that use the workflow, per their catalogue entries: the alias ARN
 * in `STATE_MACHINE_ARN` with the `states:` actions listed, `DescribeExecution` on this state
 * machine's executions, and `APPROVAL_TIMEOUT_SECONDS` on `request-approval` (the approval
 * state's `TimeoutSeconds`, so the approval record's TTL outlives the task token).
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/concepts-cd-aliasing-versioning.html
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/execution-alias-version-associate.html
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/auth-version-alias.html
 * @see https://docs.aws.amazon.com/step-functions/latest/apireference/API_UpdateStateMachine.html
 * @see https://docs.aws.amazon.com/cdk/api/v2/docs/aws-cdk-lib.aws_lambda.Function.html#currentversion
 */
import { readFileSync } from 'node:fs';
import { FUNCTION_ACCESS, placeholderOf } from '@dlq-redrive/cdk/function-catalog';
import {
  ArnFormat,
  type CfnElement,
  aws_iam as iam,
  aws_logs as logs,
  Names,
  RemovalPolicy,
  Stack,
  aws_stepfunctions as sfn,
} from 'aws-cdk-lib';
import { Construct } from 'constructs';
import {
  ALIAS_PLACEHOLDER,
  aslPlaceholders,
  aslTaskResources,
  DEFAULT_DEFINITION_PATH,
  DEFAULT_WORKFLOW_ALIAS,
  substitutionsFor,
} from '../asl.js';
import { acknowledge, nagArnPrefix } from '../nag.js';
import { aliasNameProblem, throwIfInvalid } from '../validation.js';
import type { PipelineFunctions } from './pipeline-functions.js';

const START_EXECUTION = 'states:StartExecution';

/** Task resources the definition may use besides `${XFunctionArn}` placeholders. */
const LAMBDA_INVOKE_INTEGRATIONS = [
  'arn:aws:states:::lambda:invoke',
  'arn:aws:states:::lambda:invoke.waitForTaskToken',
];
/** The Task resource of a run that continues in a new execution of the same state machine. */
const START_EXECUTION_TASK = 'arn:aws:states:::states:startExecution';

/** Properties of {@link RedriveWorkflow}. */
export interface RedriveWorkflowProps {
  /** The functions the definition invokes, and the ones that start or answer it. */
  readonly functions: PipelineFunctions;
  /**
   * Path of the state machine definition (JSONPath ASL with `${...}` placeholders).
   * @default statemachines/redrive.asl.json
   * @see https://docs.aws.amazon.com/step-functions/latest/dg/concepts-amazon-states-language.html
   */
  readonly definitionPath?: string;
  /**
   * Retention of the state machine's log group.
   * @default logs.RetentionDays.ONE_MONTH
   * @see https://docs.aws.amazon.com/step-functions/latest/dg/cw-logs.html
   */
  readonly logRetention?: logs.RetentionDays;
  /**
   * Name of the alias executions start through: 1-80 of letters, digits, `-` and `_`, not only
   * digits.
   * @default 'live'
   * @see https://docs.aws.amazon.com/step-functions/latest/dg/concepts-state-machine-alias.html
   */
  readonly aliasName?: string;
}

/** The problems of `props` (for {@link PipelineStack}, which checks all of its props at once). */
export function redriveWorkflowProblems(
  props: { readonly aliasName?: string | undefined },
  name = 'aliasName',
): string[] {
  return aliasNameProblem(name, props.aliasName);
}

/** See the file header. */
export class RedriveWorkflow extends Construct {
  /** The redrive state machine (its unqualified ARN names it in IAM and in execution events). */
  public readonly stateMachine: sfn.StateMachine;
  /** The version published from the current definition. */
  public readonly version: sfn.CfnStateMachineVersion;
  /** The alias every execution starts through; it routes to {@link version}. */
  public readonly alias: sfn.CfnStateMachineAlias;
  /** The alias's name (`live` by default). */
  public readonly aliasName: string;
  /** The alias's ARN: `<state machine ARN>:<alias name>`. */
  public readonly aliasArn: string;

  public constructor(scope: Construct, id: string, props: RedriveWorkflowProps) {
    super(scope, id);
    // Check props.
    throwIfInvalid('RedriveWorkflow', this, redriveWorkflowProblems(props));
    const definitionPath = props.definitionPath ?? DEFAULT_DEFINITION_PATH;
    const text = readFileSync(definitionPath, 'utf8');
    const { functions } = props;
    this.aliasName = props.aliasName ?? DEFAULT_WORKFLOW_ALIAS;

    // Build: the versions of the functions the definition names, then the state machine.
    const used = new Set(aslPlaceholders(text));
    const named = functions
      .entries()
      .filter(([name]) => used.has(placeholderOf(name)))
      .map(([name, fn]) => ({ name, fn, version: fn.currentVersion }));
    const substitutions = substitutionsFor(text, {
      ...Object.fromEntries(named.map(({ name, version }) => [placeholderOf(name), version.functionArn])),
      [ALIAS_PLACEHOLDER]: this.aliasName,
    });
    const unsupported = aslTaskResources(JSON.parse(text)).filter(
      (resource) =>
        !/^\$\{[A-Za-z0-9]+FunctionArn\}$/.test(resource) &&
        !LAMBDA_INVOKE_INTEGRATIONS.includes(resource) &&
        resource !== START_EXECUTION_TASK,
    );
    if (unsupported.length > 0) {
      throw new Error(
        `statemachines/redrive.asl.json calls Task resources the stack grants nothing for: ${unsupported.join(', ')}`,
      );
    }

    // Under /aws/vendedlogs/: Step Functions adds each log group outside it to the account's
    // CloudWatch Logs resource policy, which is capped at 5,120 characters.
    const logGroup = new logs.LogGroup(this, 'RedriveWorkflowLogs', {
      logGroupName: `/aws/vendedlogs/states/${Names.uniqueResourceName(this, { maxLength: 400, separator: '-' })}`,
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.stateMachine = new sfn.StateMachine(this, 'RedriveWorkflow', {
      stateMachineType: sfn.StateMachineType.STANDARD,
      definitionBody: sfn.DefinitionBody.fromFile(definitionPath),
      // The continuation starts on the alias the run started through (States.Format of the
      // unqualified ARN and this name), never on the unqualified ARN's latest revision.
      definitionSubstitutions: substitutions,
      tracingEnabled: false,
      // Execution data holds ids and counts only, but the approval task's input carries a task
      // token: keep it out of the logs.
      logs: { destination: logGroup, level: sfn.LogLevel.ALL, includeExecutionData: false },
    });
    // The definition calls function versions (`<function ARN>:<n>`). Executions of older state
    // machine versions still call older Lambda versions, and runs started before definitions
    // named versions call the unqualified ARN: the one role serves them all.
    this.stateMachine.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['lambda:InvokeFunction'],
        resources: named.flatMap(({ fn }) => [fn.functionArn, `${fn.functionArn}:*`]),
      }),
    );
    if (aslTaskResources(JSON.parse(text)).includes(START_EXECUTION_TASK)) {
      // A long run continues in a new execution of this state machine (25,000 history events per
      // execution). A policy of its own: the state machine depends on its role's default
      // policy, so a statement there naming the state machine's ARN would be a circular dependency.
      new iam.Policy(this, 'RedriveWorkflowContinuation', {
        roles: [this.stateMachine.role],
        statements: [
          new iam.PolicyStatement({
            actions: ['states:StartExecution'],
            resources: [this.stateMachine.stateMachineArn],
            conditions: { 'ForAnyValue:StringEquals': { 'states:StateMachineQualifier': [this.aliasName] } },
          }),
        ],
      });
    }
    acknowledge(this.stateMachine, {
      id: 'AwsSolutions-SF2',
      reason:
        'X-Ray is off on purpose (docs/observability.md): no task is instrumented, so traces would be empty; the execution history, the log group and the DlqRedrive metrics cover a run.',
    });
    const stack = Stack.of(this);
    acknowledge(
      this.stateMachine,
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'Resource "*" only for CloudWatch Logs vended-log delivery (logs:CreateLogDelivery, GetLogDelivery, ...; no resource-level permissions) added by CDK for logging. Lambda invoke is scoped to the listed function ARNs.',
      },
      ...named.map(({ fn }) => ({
        id: `AwsSolutions-IAM5[Resource::<${stack.getLogicalId(fn.node.defaultChild as CfnElement)}.Arn>:*]`,
        reason:
          'Versions of one named function: each state machine version calls the Lambda versions published with it, and executions still running on an older version keep calling theirs.',
      })),
    );

    this.version = new sfn.CfnStateMachineVersion(this, 'RedriveWorkflowVersion', {
      stateMachineArn: this.stateMachine.stateMachineArn,
      // A new revision (definition, role, logging or tracing changed) publishes a new version.
      stateMachineRevisionId: this.stateMachine.stateMachineRevisionId,
      description: 'dlq-redrive: published by the stack from the deployed definition',
    });
    // Kept when a new one replaces it: the alias can be pointed back at it (docs/deploy.md).
    this.version.applyRemovalPolicy(RemovalPolicy.RETAIN);
    this.alias = new sfn.CfnStateMachineAlias(this, 'RedriveWorkflowAlias', {
      name: this.aliasName,
      description: 'dlq-redrive: where executions start (the latest published version)',
      routingConfiguration: [{ stateMachineVersionArn: this.version.attrArn, weight: 100 }],
    });
    this.aliasArn = this.alias.attrArn;

    // Wire: who starts, answers and describes it.
    this.wireCallers(functions);
    const approvalTimeout = (JSON.parse(text) as { States?: Record<string, { TimeoutSeconds?: unknown }> })
      .States?.RequestApproval?.TimeoutSeconds;
    if (typeof approvalTimeout === 'number') {
      functions.functions['request-approval']?.addEnvironment(
        'APPROVAL_TIMEOUT_SECONDS',
        String(approvalTimeout),
      );
    }
  }

  /**
   * The alias ARN in `STATE_MACHINE_ARN` and the `states:` grants of every function whose
   * catalogue entry lists them. Step Functions authorises calls on a version or alias against the
   * state machine's own ARN; the qualifier is the `states:StateMachineQualifier` condition key, so
   * StartExecution is allowed through the alias only (not the unqualified ARN, nor a version).
   */
  private wireCallers(functions: PipelineFunctions): void {
    const stack = Stack.of(this);
    const sm = this.stateMachine;
    for (const [name, fn, role] of functions.entries()) {
      const access = FUNCTION_ACCESS[name];
      const starts = access.stateMachine.filter((action) => action === START_EXECUTION);
      const others = access.stateMachine.filter((action) => action !== START_EXECUTION);
      if (starts.length > 0) {
        role.addToPrincipalPolicy(
          new iam.PolicyStatement({
            actions: starts,
            resources: [sm.stateMachineArn],
            conditions: { 'ForAnyValue:StringEquals': { 'states:StateMachineQualifier': [this.aliasName] } },
          }),
        );
      }
      if (others.length > 0) {
        role.addToPrincipalPolicy(
          new iam.PolicyStatement({ actions: others, resources: [sm.stateMachineArn] }),
        );
      }
      if (access.stateMachine.length > 0) fn.addEnvironment('STATE_MACHINE_ARN', this.aliasArn);
      if (access.executions.length > 0) {
        const executions = stack.formatArn({
          service: 'states',
          resource: 'execution',
          resourceName: `${sm.stateMachineName}:*`,
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        });
        role.addToPrincipalPolicy(
          new iam.PolicyStatement({ actions: [...access.executions], resources: [executions] }),
        );
        const smId = stack.getLogicalId(sm.node.defaultChild as sfn.CfnStateMachine);
        acknowledge(role, {
          id: `AwsSolutions-IAM5[Resource::${nagArnPrefix(stack, 'states')}execution:<${smId}.Name>:*]`,
          reason:
            'Execution ARNs are only known at run time; the wildcard covers executions of this one state machine (DescribeExecution after ExecutionAlreadyExists).',
        });
      }
    }
  }
}
