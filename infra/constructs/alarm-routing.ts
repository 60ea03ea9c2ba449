/**
 * `AlarmRouting`: how events reach the pipeline's functions.
 * - Alarm state changes to triage: an EventBridge rule on `source: aws.cloudwatch`, `detail-type:
 *   CloudWatch Alarm State Change` and `resources:` the ARNs of the alarms the pipeline owns
 *   ({@link routeAlarm}; configuration-change events have another detail-type and never match),
 *   DISABLED while no alarm is routed (a pattern without `resources` would match every
 *   alarm of the account); and/or an SNS topic, encrypted with a customer managed key CloudWatch
 *   may use, that the owned alarms notify ({@link alarmAction}).
 * - Redrive executions that ended ABORTED, TIMED_OUT or FAILED to `execution-ended`.
 * Every target retries 8 times within 2 hours, then goes to the delivery DLQ.
 *
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch-and-eventbridge.html
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/cw-events.html
 * @see https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services
 */
import {
  ArnFormat,
  aws_cloudwatch_actions as cwActions,
  Duration,
  aws_events as events,
  aws_iam as iam,
  aws_kms as kms,
  Lazy,
  type aws_lambda as lambda,
  RemovalPolicy,
  Stack,
  type aws_stepfunctions as sfn,
  aws_sns as sns,
  type aws_sqs as sqs,
  aws_sns_subscriptions as subscriptions,
  aws_events_targets as targets,
} from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { oneOfProblem, throwIfInvalid } from '../validation.js';

/** Where alarm transitions reach the triage function. */
export type AlarmDelivery = 'eventbridge' | 'sns' | 'both';

/** The values of {@link AlarmDelivery}. */
export const ALARM_DELIVERIES: readonly AlarmDelivery[] = ['eventbridge', 'sns', 'both'];

/** Properties of {@link AlarmRouting}. */
export interface AlarmRoutingProps {
  /**
   * Where failed deliveries go (after the targets' retries), and SNS deliveries to triage that
   * Lambda could not take.
   */
  readonly deliveryDlq: sqs.IQueue;
  /**
   * The function alarm transitions are delivered to.
   * @default - no alarm routing
   */
  readonly triage?: lambda.IFunction;
  /**
   * How alarm state changes reach triage. `eventbridge`: the rule. `sns`: the topic, which
   * {@link MonitoredDlq} adds as the alarms' action. `both`: each transition arrives twice
   * (triage dedupes on alarm ARN + state timestamp).
   * @default 'eventbridge'
   * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch-and-eventbridge.html
   */
  readonly delivery?: AlarmDelivery;
  /**
   * Route the state machine's ABORTED, TIMED_OUT and FAILED executions to this function.
   * @default - no execution-ended rule
   * @see https://docs.aws.amazon.com/step-functions/latest/dg/cw-events.html
   */
  readonly executionEnded?: { readonly handler: lambda.IFunction; readonly stateMachine: sfn.IStateMachine };
}

/** See the file header. */
export class AlarmRouting extends Construct {
  /** Rule that routes the owned alarms' state changes to triage (`eventbridge` / `both`). */
  public readonly alarmRule: events.Rule | undefined;
  /** Topic the owned alarms notify (`sns` / `both`). */
  public readonly alarmTopic: sns.Topic | undefined;
  /** Rule that routes the redrive executions that ended ABORTED/TIMED_OUT/FAILED. */
  public readonly executionEndedRule: events.Rule | undefined;

  private readonly deliveryDlq: sqs.IQueue;
  private readonly routedAlarmArns: string[] = [];

  public constructor(scope: Construct, id: string, props: AlarmRoutingProps) {
    super(scope, id);
    throwIfInvalid('AlarmRouting', this, oneOfProblem('delivery', props.delivery, ALARM_DELIVERIES));
    const delivery = props.delivery ?? 'eventbridge';
    this.deliveryDlq = props.deliveryDlq;

    const { triage, executionEnded } = props;
    if (triage !== undefined && delivery !== 'sns') this.alarmRule = this.buildAlarmRule(triage);
    if (triage !== undefined && delivery !== 'eventbridge') this.alarmTopic = this.buildAlarmTopic(triage);
    if (executionEnded !== undefined) {
      this.executionEndedRule = this.buildExecutionEndedRule(
        executionEnded.handler,
        executionEnded.stateMachine,
      );
    }
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
    const arn = Stack.of(this).formatArn({
      service: 'cloudwatch',
      resource: 'alarm',
      resourceName: alarmName,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    this.routedAlarmArns.push(arn);
    this.alarmRule.addEventPattern({ resources: [arn] });
    return arn;
  }

  /** The SNS alarm action for owned alarms (`sns` / `both`), else undefined. */
  public alarmAction(): cwActions.SnsAction | undefined {
    return this.alarmTopic === undefined ? undefined : new cwActions.SnsAction(this.alarmTopic);
  }

  private target(fn: lambda.IFunction): targets.LambdaFunction {
    return new targets.LambdaFunction(fn, {
      deadLetterQueue: this.deliveryDlq,
      retryAttempts: 8,
      maxEventAge: Duration.hours(2),
    });
  }

  private buildAlarmRule(triage: lambda.IFunction): events.Rule {
    const rule = new events.Rule(this, 'AlarmStateChangeRule', {
      description:
        'State changes of the DLQ alarms the pipeline owns -> triage. Only "CloudWatch Alarm State Change": configuration changes never reach triage.',
      eventPattern: {
        source: ['aws.cloudwatch'],
        detailType: ['CloudWatch Alarm State Change'],
      },
      targets: [this.target(triage)],
    });
    // With no alarm routed yet the pattern would match every alarm in the account: keep it off.
    (rule.node.defaultChild as events.CfnRule).state = Lazy.string({
      produce: () => (this.routedAlarmArns.length > 0 ? 'ENABLED' : 'DISABLED'),
    });
    return rule;
  }

  /**
   * "Step Functions Execution Status Change" events of the redrive state machine that end a run
   * without success. The event's `detail.stateMachineArn` is the unqualified state machine ARN
   * whichever version or alias started the execution (those come in `stateMachineVersionArn` and
   * `stateMachineAliasArn`), so one pattern covers the executions of every version.
   * @see https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html
   */
  private buildExecutionEndedRule(fn: lambda.IFunction, stateMachine: sfn.IStateMachine): events.Rule {
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
      targets: [this.target(fn)],
    });
  }

  private buildAlarmTopic(triage: lambda.IFunction): sns.Topic {
    const stack = Stack.of(this);
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
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
      }),
    );
    const topic = new sns.Topic(this, 'AlarmTopic', { masterKey: key, enforceSSL: true });
    topic.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnLike: {
            'aws:SourceArn': stack.formatArn({
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
      new subscriptions.LambdaSubscription(triage, { deadLetterQueue: this.deliveryDlq }),
    );
    return topic;
  }
}
