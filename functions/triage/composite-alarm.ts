/**
 * Composite alarms: from the children a composite alarm's event names as triggering it to the
 * DLQs triage should inventory.
 *
 * Rules (docs/triage.md, "Composite alarms"):
 * - only the triggering children the event itself names count (EventBridge
 *   `reasonData.triggeringAlarms`, SNS `TriggeringChildren`); the composite's rule is never parsed
 *   for queue names, so a DLQ whose alarm is OK is never inventoried because the rule mentions it;
 * - each child is read with DescribeAlarms: it is followed only while it is in ALARM (the event's
 *   state and its state now), a metric alarm counts only when it watches an SQS DLQ depth or age
 *   metric (`AWS/SQS` `ApproximateNumberOfMessagesVisible` / `ApproximateAgeOfOldestMessage` with a
 *   `QueueName` dimension, alone or inside metric math), and a child composite is followed through
 *   its own triggering children, at most {@link MAX_DEPTH} levels down;
 * - every child that is not followed is reported with the reason, never guessed;
 * - children that cannot be read at all (DescribeAlarms denied) make the event unresolvable:
 *   nothing is peeked.
 *
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Create_Composite_Alarm.html
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_DescribeAlarms.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-available-cloudwatch-metrics.html
 */
import {
  type CloudWatchClient,
  type CompositeAlarm,
  DescribeAlarmsCommand,
  type MetricAlarm,
} from '@aws-sdk/client-cloudwatch';
import type { CompositeAlarmInfo } from '#inventory/model.js';
import { cloudWatchClient } from '#platform/clients.js';
import { AccessDeniedError, awsErrorName, isRetryable, TransientError } from '#platform/errors.js';

/** SQS metrics that say a DLQ holds messages: the alarms a composite's DLQ children are made of. */
export const DLQ_METRICS: readonly string[] = [
  'ApproximateNumberOfMessagesVisible',
  'ApproximateAgeOfOldestMessage',
];

/** How many composite levels below the alarm that fired are followed. */
export const MAX_DEPTH = 3;

/** One child alarm as triage needs it. */
export interface DescribedAlarm {
  alarmName: string;
  alarmArn: string;
  kind: 'metric' | 'composite';
  stateValue: string;
  /** Queue names of the SQS DLQ depth/age metrics the alarm watches (metric alarms). */
  dlqQueueNames: string[];
  /** `<namespace> <metric>` of every metric it watches, for the report of a non-DLQ alarm. */
  metrics: string[];
  /** A composite child's own triggering children (from its StateReasonData); null when unreadable. */
  triggeringChildArns: string[] | null;
}

/** The CloudWatch port: DescribeAlarms by name. */
export interface AlarmDirectory {
  /**
   * Metric and composite alarms of these names (missing ones are left out).
   * @throws AccessDeniedError when DescribeAlarms is denied; TransientError on throttling / 5xx.
   */
  describe(names: readonly string[]): Promise<DescribedAlarm[]>;
}

/** What happened to one child of a composite alarm. */
export interface ChildOutcome {
  alarmArn: string;
  alarmName: string;
  /** How many composite levels below the alarm that fired (1 = its own child). */
  depth: number;
  outcome:
    | 'triaged'
    | 'not-in-alarm'
    | 'not-a-dlq-alarm'
    | 'not-a-dlq'
    | 'queue-not-found'
    | 'not-found'
    | 'too-deep'
    | 'busy'
    | 'refused'
    | 'empty'
    | 'partial';
  queueNames?: string[];
  reason: string;
}

/** Result of {@link resolveCompositeChildren}. */
export type CompositeResolution =
  | { readable: true; children: ChildOutcome[]; queueNames: string[] }
  | { readable: false; reason: string; children: ChildOutcome[] };

/** The name part of an alarm ARN (`arn:aws:cloudwatch:<region>:<account>:alarm:<name>`). */
export function alarmNameOfArn(arn: string): string {
  const at = arn.indexOf(':alarm:');
  return at < 0 ? arn : arn.slice(at + ':alarm:'.length);
}

/** Child ARNs from a composite alarm's StateReasonData, or null when it names none. */
export function triggeringArnsOf(reasonData: string | undefined): string[] | null {
  if (!reasonData) return null;
  try {
    const list = (JSON.parse(reasonData) as { triggeringAlarms?: unknown }).triggeringAlarms;
    if (!Array.isArray(list) || list.length === 0) return null;
    const arns = list
      .map((c) => (c as { arn?: unknown } | null)?.arn)
      .filter((a): a is string => typeof a === 'string');
    return arns.length > 0 ? arns : null;
  } catch {
    return null;
  }
}

function describedMetric(alarm: MetricAlarm): DescribedAlarm {
  const stats = [
    { namespace: alarm.Namespace, name: alarm.MetricName, dimensions: alarm.Dimensions },
    ...(alarm.Metrics ?? []).flatMap((m) =>
      m.MetricStat?.Metric
        ? [
            {
              namespace: m.MetricStat.Metric.Namespace,
              name: m.MetricStat.Metric.MetricName,
              dimensions: m.MetricStat.Metric.Dimensions,
            },
          ]
        : [],
    ),
  ].filter((s) => s.name !== undefined);
  const dlqQueueNames = stats
    .filter((s) => s.namespace === 'AWS/SQS' && DLQ_METRICS.includes(s.name as string))
    .flatMap((s) =>
      (s.dimensions ?? []).filter((d) => d.Name === 'QueueName' && d.Value).map((d) => d.Value as string),
    );
  const expressions = (alarm.Metrics ?? []).flatMap((m) =>
    m.Expression && !m.MetricStat ? [`expression ${m.Expression}`] : [],
  );
  return {
    alarmName: alarm.AlarmName ?? '',
    alarmArn: alarm.AlarmArn ?? '',
    kind: 'metric',
    stateValue: alarm.StateValue ?? 'INSUFFICIENT_DATA',
    dlqQueueNames: [...new Set(dlqQueueNames)],
    metrics: [...stats.map((s) => `${s.namespace ?? '?'} ${s.name}`), ...expressions],
    triggeringChildArns: null,
  };
}

function describedComposite(alarm: CompositeAlarm): DescribedAlarm {
  return {
    alarmName: alarm.AlarmName ?? '',
    alarmArn: alarm.AlarmArn ?? '',
    kind: 'composite',
    stateValue: alarm.StateValue ?? 'INSUFFICIENT_DATA',
    dlqQueueNames: [],
    metrics: [],
    triggeringChildArns: triggeringArnsOf(alarm.StateReasonData),
  };
}

/**
 * The CloudWatch adapter of {@link AlarmDirectory}: DescribeAlarms with `AlarmTypes` both kinds
 * (CloudWatch returns only metric alarms otherwise), 100 names per call, every page.
 * @param options.client - @default the shared client (`AWS_ENDPOINT_URL_CLOUDWATCH` locally)
 */
export function createCloudWatchAlarmDirectory(options: { client?: CloudWatchClient } = {}): AlarmDirectory {
  const client = () => options.client ?? cloudWatchClient();
  return {
    async describe(names) {
      const out: DescribedAlarm[] = [];
      for (let i = 0; i < names.length; i += 100) {
        const slice = names.slice(i, i + 100);
        let token: string | undefined;
        do {
          try {
            const page = await client().send(
              new DescribeAlarmsCommand({
                AlarmNames: slice,
                AlarmTypes: ['MetricAlarm', 'CompositeAlarm'],
                MaxRecords: 100,
                ...(token ? { NextToken: token } : {}),
              }),
            );
            out.push(...(page.MetricAlarms ?? []).map(describedMetric));
            out.push(...(page.CompositeAlarms ?? []).map(describedComposite));
            token = page.NextToken;
          } catch (error) {
            const name = awsErrorName(error);
            if (name === 'AccessDenied' || name === 'AccessDeniedException')
              throw new AccessDeniedError('cloudwatch:DescribeAlarms', slice.join(', '), error);
            if (isRetryable(error) || name === 'Throttling' || name === 'ThrottlingException')
              throw new TransientError(`cloudwatch:DescribeAlarms: ${(error as Error).message}`, error);
            throw error;
          }
        } while (token);
      }
      return out;
    },
  };
}

/**
 * Follows a composite alarm's triggering children to the DLQ queue names to triage.
 *
 * @returns `readable: false` (with the reason) when the event names no children or DescribeAlarms
 *   is denied: the caller peeks nothing. Otherwise the queue names of the children followed and an
 *   outcome for every child (those not followed say why).
 * @throws TransientError when CloudWatch throttles (the Lambda retry reads the children again).
 */
export async function resolveCompositeChildren(
  composite: CompositeAlarmInfo,
  directory: AlarmDirectory | undefined,
): Promise<CompositeResolution> {
  if (composite.triggeringChildren === null)
    return {
      readable: false,
      reason: composite.unreadableReason ?? 'the event names no triggering children',
      children: [],
    };
  if (!directory)
    return {
      readable: false,
      reason: 'no CloudWatch access configured to read the child alarms',
      children: [],
    };
  const children: ChildOutcome[] = [];
  const queueNames = new Set<string>();
  const seen = new Set<string>();
  let frontier: string[] = [];
  for (const child of composite.triggeringChildren) {
    const alarmName = alarmNameOfArn(child.alarmArn);
    if (seen.has(child.alarmArn)) continue;
    seen.add(child.alarmArn);
    if (child.state !== null && child.state !== 'ALARM')
      children.push({
        alarmArn: child.alarmArn,
        alarmName,
        depth: 1,
        outcome: 'not-in-alarm',
        reason: `was ${child.state} when the composite alarm was evaluated`,
      });
    else frontier.push(child.alarmArn);
  }
  for (let depth = 1; frontier.length > 0; depth++) {
    let described: DescribedAlarm[];
    try {
      described = await directory.describe(frontier.map(alarmNameOfArn));
    } catch (error) {
      if (error instanceof AccessDeniedError)
        return { readable: false, reason: `the child alarms cannot be read: ${error.message}`, children };
      throw error;
    }
    const byName = new Map(described.map((d) => [d.alarmName, d]));
    const next: string[] = [];
    for (const arn of frontier) {
      const alarmName = alarmNameOfArn(arn);
      const base = { alarmArn: arn, alarmName, depth };
      const alarm = byName.get(alarmName);
      if (!alarm) {
        children.push({
          ...base,
          outcome: 'not-found',
          reason: 'DescribeAlarms does not know this alarm (deleted?)',
        });
        continue;
      }
      if (alarm.stateValue !== 'ALARM') {
        children.push({ ...base, outcome: 'not-in-alarm', reason: `is ${alarm.stateValue} now` });
        continue;
      }
      if (alarm.kind === 'composite') {
        if (depth >= MAX_DEPTH) {
          children.push({
            ...base,
            outcome: 'too-deep',
            reason: `a composite alarm ${depth} levels down: not followed further`,
          });
          continue;
        }
        const arns = (alarm.triggeringChildArns ?? []).filter((a) => !seen.has(a));
        if (alarm.triggeringChildArns === null)
          children.push({
            ...base,
            outcome: 'not-a-dlq-alarm',
            reason: 'a composite alarm whose StateReasonData names no triggering children',
          });
        for (const a of arns) seen.add(a);
        next.push(...arns);
        continue;
      }
      if (alarm.dlqQueueNames.length === 0) {
        children.push({
          ...base,
          outcome: 'not-a-dlq-alarm',
          reason: `watches ${alarm.metrics.join(', ') || 'no metric'}, not an SQS DLQ depth or age metric with a QueueName`,
        });
        continue;
      }
      for (const q of alarm.dlqQueueNames) queueNames.add(q);
      children.push({
        ...base,
        outcome: 'triaged',
        queueNames: alarm.dlqQueueNames,
        reason: 'DLQ alarm in ALARM',
      });
    }
    frontier = next;
  }
  return { readable: true, children, queueNames: [...queueNames] };
}
