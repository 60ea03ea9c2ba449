/**
 * `IRedrivePipeline`: what {@link MonitoredDlq} and {@link DlqCompositeAlarm} need of a deployed
 * dlq-redrive pipeline: its table (registrations), its functions' roles (queue grants) and the way
 * alarm state changes reach triage. The pipeline's stack implements it; a pipeline deployed by
 * another stack or app of the same account and Region is imported with
 * {@link RedrivePipeline.fromAttributes} from its names and ARNs (the pipeline stack's
 * `PipelineAttributes` output). Another account is out of scope: the grants are IAM policies
 * attached to the pipeline's roles, which only the roles' account can attach.
 *
 * @see https://docs.aws.amazon.com/cdk/v2/guide/resources.html#resources_importing
 */
import {
  Arn,
  ArnFormat,
  type aws_cloudwatch as cloudwatch,
  aws_cloudwatch_actions as cwActions,
  Duration,
  aws_dynamodb as dynamodb,
  aws_events as events,
  aws_iam as iam,
  aws_kms as kms,
  aws_lambda as lambda,
  Stack,
  aws_sns as sns,
  Token,
  aws_events_targets as targets,
} from 'aws-cdk-lib';
import { Construct, type IConstruct } from 'constructs';
import { throwIfInvalid } from './errors.js';
import { FUNCTION_NAMES, type FunctionName } from './function-catalog.js';

/** A dlq-redrive pipeline, deployed in this app or imported. */
export interface IRedrivePipeline extends IConstruct {
  /** The account the pipeline is deployed in (a token when its stack is environment-agnostic). */
  readonly account: string;
  /** The Region the pipeline is deployed in (a token when its stack is environment-agnostic). */
  readonly region: string;
  /** The name of the pipeline's stack: it names the per-stack policies holding the queue grants. */
  readonly stackName: string;
  /** The pipeline table, where registrations (`DLQ#<dlqArn>` / `CONFIG`) are written. */
  readonly table: Pick<dynamodb.ITable, 'tableName' | 'tableArn' | 'encryptionKey'>;
  /** Each pipeline function's role, by function name: the targets of the queue grants. */
  readonly roles: Partial<Record<FunctionName, iam.IRole>>;
  /**
   * Routes an alarm's state changes to triage through EventBridge.
   * @param alarmName - the alarm's literal name (not a token).
   * @param scope - a construct of the alarm's stack.
   * @returns the routed alarm ARN, or undefined when alarms reach triage through SNS only.
   */
  routeAlarm(alarmName: string, scope: IConstruct): string | undefined;
  /** The SNS action that brings an alarm's state changes to triage, or undefined (EventBridge only). */
  alarmAction(): cloudwatch.IAlarmAction | undefined;
}

/** Names and ARNs of a deployed pipeline (its stack's `PipelineAttributes` output, as JSON). */
export interface RedrivePipelineAttributes {
  /** The pipeline stack's name (`DlqRedrivePipeline` in the example app). */
  readonly stackName: string;
  /** The pipeline table's ARN. */
  readonly tableArn: string;
  /**
   * The table's customer managed KMS key.
   * @default - the table uses an AWS managed key
   */
  readonly tableEncryptionKeyArn?: string;
  /** The ARN of each function's role, by function name (`triage`, `move-task`, ...). */
  readonly roleArns: Partial<Record<FunctionName, string>>;
  /**
   * The triage function's ARN: alarms are routed to it by an EventBridge rule in their own stack
   * (the pipeline stack's rule names only alarms of its app).
   * @default - no EventBridge routing: `alarmTopicArn` is required
   */
  readonly triageFunctionArn?: string;
  /**
   * The pipeline's alarm topic (`alarmDelivery` `sns` or `both`): the alarms notify it.
   * @default - no SNS routing: `triageFunctionArn` is required
   */
  readonly alarmTopicArn?: string;
}

const TABLE_ARN = /^arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:\d{12}:table\/[A-Za-z0-9_.-]{3,255}$/;
const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[A-Za-z0-9+=,.@_/-]{1,512}$/;

/** Every problem of the attributes, each naming the attribute, what it must be and the value given. */
function attributeProblems(attrs: RedrivePipelineAttributes): string[] {
  const problems: string[] = [];
  const literal = (v: string | undefined): v is string => v !== undefined && !Token.isUnresolved(v);
  if (literal(attrs.tableArn) && !TABLE_ARN.test(attrs.tableArn))
    problems.push(
      `tableArn: must be a DynamoDB table ARN, arn:<partition>:dynamodb:<region>:<account>:table/<name> (given: ${JSON.stringify(attrs.tableArn)})`,
    );
  for (const [name, arn] of Object.entries(attrs.roleArns)) {
    if (!(FUNCTION_NAMES as readonly string[]).includes(name))
      problems.push(
        `roleArns.${name}: must be one of ${FUNCTION_NAMES.join(', ')} (given: ${JSON.stringify(name)})`,
      );
    else if (literal(arn) && !ROLE_ARN.test(arn))
      problems.push(`roleArns.${name}: must be an IAM role ARN (given: ${JSON.stringify(arn)})`);
  }
  if (attrs.triageFunctionArn === undefined && attrs.alarmTopicArn === undefined)
    problems.push(
      'triageFunctionArn, alarmTopicArn: at least one is needed to reach triage (given: neither)',
    );
  if (attrs.stackName.length === 0) problems.push('stackName: must not be empty (given: "")');
  return problems;
}

/** Imports of a deployed pipeline. */
export class RedrivePipeline {
  /**
   * A pipeline deployed by another stack or app in this account and Region, from its names and ARNs.
   * @throws ValidationError naming each bad attribute.
   * @example
   * const pipeline = RedrivePipeline.fromAttributes(this, 'Pipeline', attributes);
   */
  public static fromAttributes(
    scope: Construct,
    id: string,
    attrs: RedrivePipelineAttributes,
  ): IRedrivePipeline {
    return new ImportedRedrivePipeline(scope, id, attrs);
  }

  private constructor() {}
}

/** See {@link RedrivePipeline.fromAttributes}. */
class ImportedRedrivePipeline extends Construct implements IRedrivePipeline {
  public readonly account: string;
  public readonly region: string;
  public readonly stackName: string;
  public readonly table: IRedrivePipeline['table'];
  public readonly roles: Partial<Record<FunctionName, iam.IRole>> = {};
  private readonly triage: lambda.IFunction | undefined;
  private readonly topic: sns.ITopic | undefined;

  public constructor(scope: Construct, id: string, attrs: RedrivePipelineAttributes) {
    super(scope, id);
    throwIfInvalid('RedrivePipeline.fromAttributes', this, attributeProblems(attrs), 'attributes');
    const tableArn = Arn.split(attrs.tableArn, ArnFormat.SLASH_RESOURCE_NAME);
    this.account = tableArn.account ?? Stack.of(this).account;
    this.region = tableArn.region ?? Stack.of(this).region;
    this.stackName = attrs.stackName;
    this.table = dynamodb.Table.fromTableAttributes(this, 'Table', {
      tableArn: attrs.tableArn,
      ...(attrs.tableEncryptionKeyArn === undefined
        ? {}
        : { encryptionKey: kms.Key.fromKeyArn(this, 'TableKey', attrs.tableEncryptionKeyArn) }),
    });
    for (const name of FUNCTION_NAMES) {
      const arn = attrs.roleArns[name];
      // mutable: the queue grants are policies attached to the role (same account).
      if (arn !== undefined)
        this.roles[name] = iam.Role.fromRoleArn(this, `${name}Role`, arn, { mutable: true });
    }
    if (attrs.triageFunctionArn !== undefined)
      this.triage = lambda.Function.fromFunctionAttributes(this, 'Triage', {
        functionArn: attrs.triageFunctionArn,
        sameEnvironment: true,
      });
    if (attrs.alarmTopicArn !== undefined)
      this.topic = sns.Topic.fromTopicArn(this, 'AlarmTopic', attrs.alarmTopicArn);
  }

  /** Adds the alarm's ARN to this pipeline's rule in the alarm's stack (one rule per stack). */
  public routeAlarm(alarmName: string, scope: IConstruct): string | undefined {
    if (this.triage === undefined) return undefined;
    const stack = Stack.of(scope);
    const arn = stack.formatArn({
      service: 'cloudwatch',
      resource: 'alarm',
      resourceName: alarmName,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    const id = `DlqRedriveAlarmRouting${this.stackName.replace(/[^A-Za-z0-9]/g, '')}`;
    const rule =
      (stack.node.tryFindChild(id) as events.Rule | undefined) ??
      new events.Rule(stack, id, {
        description: `State changes of DLQ alarms registered with ${this.stackName} -> its triage function.`,
        eventPattern: { source: ['aws.cloudwatch'], detailType: ['CloudWatch Alarm State Change'] },
        targets: [
          new targets.LambdaFunction(this.triage, { retryAttempts: 8, maxEventAge: Duration.hours(2) }),
        ],
      });
    rule.addEventPattern({ resources: [arn] });
    return arn;
  }

  public alarmAction(): cloudwatch.IAlarmAction | undefined {
    return this.topic === undefined ? undefined : new cwActions.SnsAction(this.topic);
  }
}
