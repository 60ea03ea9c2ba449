/**
 * `DlqCompositeAlarm`: one CloudWatch composite alarm across registered DLQs, the way fleets route
 * DLQ alarms (one page for a team's DLQs instead of one per queue). Its rule is
 * `ALARM(<depth alarm>) OR ALARM(<age alarm>) ...` over the {@link MonitoredDlq}s given, so every
 * child is a DLQ-depth or age alarm triage can resolve to its queue. Its state changes are routed
 * to triage like the members' own (EventBridge rule and/or the SNS alarm action), and triage
 * inventories only the DLQs whose triggering child alarms are in ALARM (DescribeAlarms of the
 * children the event names; docs/triage.md, "Composite alarms").
 *
 * The members' own alarms stay routed: a transition of a member then reaches triage twice, once
 * as itself and once through the composite, and the second finds the DLQ's triage claim or open
 * incident (one workflow per DLQ) instead of starting another run.
 *
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Create_Composite_Alarm.html
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutCompositeAlarm.html
 */
import { aws_cloudwatch as cloudwatch, Token } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { throwIfInvalid } from './errors.js';
import type { MonitoredDlq } from './monitored-dlq.js';
import type { IRedrivePipeline } from './pipeline.js';

/** Properties of {@link DlqCompositeAlarm}. */
export interface DlqCompositeAlarmProps {
  /** The pipeline whose triage the composite's state changes reach (its stack, or imported). */
  readonly pipeline: IRedrivePipeline;
  /** The registered DLQs the composite watches (at least one, at most 100 child alarms). */
  readonly dlqs: readonly MonitoredDlq[];
  /**
   * The composite alarm's name (1..255 characters, a literal: routing needs its ARN at synth).
   */
  readonly compositeAlarmName: string;
  /**
   * Include each DLQ's oldest-message-age alarm beside its depth alarm.
   * @default true
   */
  readonly includeAgeAlarms?: boolean;
  /** @default - names the DLQs watched */
  readonly alarmDescription?: string;
}

/** The most child alarms one composite rule may name here (CloudWatch allows 100 per rule). */
const MAX_CHILDREN = 100;

/** See the file header. */
export class DlqCompositeAlarm extends Construct {
  /** The composite alarm. */
  public readonly alarm: cloudwatch.CompositeAlarm;
  /** Its ARN as routed to triage, or undefined when alarms reach triage through SNS only. */
  public readonly routedAlarmArn: string | undefined;

  /** @throws ValidationError naming each bad prop (`dlqs`, `compositeAlarmName`). */
  public constructor(scope: Construct, id: string, props: DlqCompositeAlarmProps) {
    super(scope, id);
    const withAge = props.includeAgeAlarms ?? true;
    const children = props.dlqs.flatMap((d) => (withAge ? [d.depthAlarm, d.ageAlarm] : [d.depthAlarm]));
    const problems: string[] = [];
    if (props.dlqs.length === 0) problems.push('dlqs: must name at least one MonitoredDlq (given: none)');
    if (children.length > MAX_CHILDREN)
      problems.push(
        `dlqs: at most ${MAX_CHILDREN} child alarms per composite rule (given: ${children.length})`,
      );
    const name = props.compositeAlarmName;
    if (Token.isUnresolved(name) || name.length < 1 || name.length > 255)
      problems.push(
        `compositeAlarmName: must be a literal of 1..255 characters (given: ${Token.isUnresolved(name) ? 'a token' : JSON.stringify(name)})`,
      );
    throwIfInvalid('DlqCompositeAlarm', this, problems);

    this.alarm = new cloudwatch.CompositeAlarm(this, 'Alarm', {
      compositeAlarmName: name,
      alarmDescription:
        props.alarmDescription ??
        `DLQ alarms of ${props.dlqs.length} registered DLQ(s): triage (dlq-redrive) inventories the ones whose child alarm is in ALARM`,
      alarmRule: cloudwatch.AlarmRule.anyOf(
        ...children.map((a) => cloudwatch.AlarmRule.fromAlarm(a, cloudwatch.AlarmState.ALARM)),
      ),
    });
    this.routedAlarmArn = props.pipeline.routeAlarm(name, this);
    const action = props.pipeline.alarmAction();
    if (action !== undefined) this.alarm.addAlarmAction(action);
  }
}
