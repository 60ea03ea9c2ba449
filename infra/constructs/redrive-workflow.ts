/**
 * `RedriveWorkflow`: the redrive state machine from `statemachines/redrive.asl.json` (JSONPath
 * ASL; every `${XFunctionArn}` placeholder is the function's ARN, and the synth fails naming any
 * placeholder without a function), Standard type, logs at level ALL without execution data (the
 * approval task's input carries a task token), X-Ray tracing. Its role may invoke exactly the
 * functions the definition names.
 *
 * It also wires the functions that use the workflow, per their catalogue entries: the state
 * machine's ARN in `STATE_MACHINE_ARN` with the `states:` actions listed, `DescribeExecution` on
 * this state machine's executions, and `APPROVAL_TIMEOUT_SECONDS` on `request-approval` (the
 * approval state's `TimeoutSeconds`, so the approval record's TTL outlives the task token).
 *
 * @see https://docs.aws.amazon.com/cdk/api/v2/docs/aws-cdk-lib.aws_stepfunctions.StateMachine.html
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/cw-logs.html
 */
import { readFileSync } from 'node:fs';
import {
  ArnFormat,
  aws_iam as iam,
  type aws_lambda as lambda,
  aws_logs as logs,
  RemovalPolicy,
  Stack,
  aws_stepfunctions as sfn,
} from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { aslTaskResources, DEFAULT_DEFINITION_PATH, substitutionsFor } from '../asl.js';
import { FUNCTION_ACCESS, placeholderOf } from '../function-catalog.js';
import { acknowledge, nagArnPrefix } from '../nag.js';
import type { PipelineFunctions } from './pipeline-functions.js';

/** Task resources the definition may use besides `${XFunctionArn}` placeholders. */
const LAMBDA_INVOKE_INTEGRATIONS = [
  'arn:aws:states:::lambda:invoke',
  'arn:aws:states:::lambda:invoke.waitForTaskToken',
];

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
}

/** See the file header. */
export class RedriveWorkflow extends Construct {
  /** The redrive state machine. */
  public readonly stateMachine: sfn.StateMachine;

  public constructor(scope: Construct, id: string, props: RedriveWorkflowProps) {
    super(scope, id);
    const definitionPath = props.definitionPath ?? DEFAULT_DEFINITION_PATH;
    const text = readFileSync(definitionPath, 'utf8');
    const { functions } = props;

    // Build: the functions the definition names, then the state machine.
    const available: Record<string, string> = {};
    for (const [name, fn] of functions.entries()) available[placeholderOf(name)] = fn.functionArn;
    const substitutions = substitutionsFor(text, available);
    const invoked: lambda.IFunction[] = functions
      .entries()
      .filter(([name]) => substitutions[placeholderOf(name)] !== undefined)
      .map(([, fn]) => fn);
    const unsupported = aslTaskResources(JSON.parse(text)).filter(
      (resource) =>
        !/^\$\{[A-Za-z0-9]+FunctionArn\}$/.test(resource) && !LAMBDA_INVOKE_INTEGRATIONS.includes(resource),
    );
    if (unsupported.length > 0) {
      throw new Error(
        `statemachines/redrive.asl.json calls Task resources the stack grants nothing for: ${unsupported.join(', ')}`,
      );
    }

    const logGroup = new logs.LogGroup(this, 'RedriveWorkflowLogs', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.stateMachine = new sfn.StateMachine(this, 'RedriveWorkflow', {
      stateMachineType: sfn.StateMachineType.STANDARD,
      definitionBody: sfn.DefinitionBody.fromFile(definitionPath),
      definitionSubstitutions: substitutions,
      tracingEnabled: true,
      // Execution data holds ids and counts only, but the approval task's input carries a task
      // token: keep it out of the logs.
      logs: { destination: logGroup, level: sfn.LogLevel.ALL, includeExecutionData: false },
    });
    // Unqualified ARNs only: the definition calls functions by ARN, never a version or alias.
    this.stateMachine.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['lambda:InvokeFunction'],
        resources: invoked.map((fn) => fn.functionArn),
      }),
    );
    acknowledge(this.stateMachine, {
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Resource "*" only for CloudWatch Logs vended-log delivery (logs:CreateLogDelivery, GetLogDelivery, ...; no resource-level permissions) and X-Ray tracing, both added by CDK for logging and tracing. Lambda invoke is scoped to the listed function ARNs.',
    });

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

  /** `STATE_MACHINE_ARN` and the `states:` grants of every function whose catalogue entry lists them. */
  private wireCallers(functions: PipelineFunctions): void {
    const stack = Stack.of(this);
    const sm = this.stateMachine;
    for (const [name, fn, role] of functions.entries()) {
      const access = FUNCTION_ACCESS[name];
      if (access.stateMachine.length > 0) {
        role.addToPrincipalPolicy(
          new iam.PolicyStatement({ actions: [...access.stateMachine], resources: [sm.stateMachineArn] }),
        );
        fn.addEnvironment('STATE_MACHINE_ARN', sm.stateMachineArn);
      }
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
            'Execution ARNs are only known at run time; the wildcard covers executions of this one state machine (DescribeExecution after ExecutionAlreadyExists, C19).',
        });
      }
    }
  }
}
