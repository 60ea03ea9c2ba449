/**
 * Local CloudWatch alarms stand-in: the alarm calls the pipeline and its tests make, on the wire
 * protocol the SDK v3 client (3.1164.0) speaks: awsJson 1.0, target `GraniteServiceVersion20100801`,
 * query-compatible errors.
 *
 * Operations: PutMetricAlarm, PutCompositeAlarm, DescribeAlarms (AlarmNames, AlarmNamePrefix,
 * AlarmTypes (default: metric alarms only, like CloudWatch), StateValue, MaxRecords, NextToken),
 * SetAlarmState, DeleteAlarms. Alarms are not evaluated against metrics: a test sets states with
 * SetAlarmState, as it would to test an alarm's actions on AWS. A composite alarm's state is set
 * the same way; its `StateReasonData` is what the test (or {@link compositeReasonData}) says.
 * Each change of an alarm's state value is sent to EventBridge's default bus as CloudWatch sends
 * it: a `CloudWatch Alarm State Change` event with `state`, `previousState` and `configuration`.
 *
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch-and-eventbridge.html
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_DescribeAlarms.html
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_SetAlarmState.html
 */
import { randomUUID } from 'node:crypto';
import {
  awsJsonProtocol,
  epochSeconds,
  requireString,
  type Standin,
  StandinError,
  startStandin,
} from './server.js';

type AlarmState = 'OK' | 'ALARM' | 'INSUFFICIENT_DATA';

interface StoredAlarm {
  type: 'MetricAlarm' | 'CompositeAlarm';
  /** The alarm as DescribeAlarms returns it (minus state, added on read). */
  config: Record<string, unknown>;
  state: { value: AlarmState; reason: string; reasonData?: string; updated: Date };
}

/** Options of {@link startCloudWatchStandin}. */
export interface CloudWatchStandinOptions {
  /** @default 'us-east-1' */
  region?: string;
  /** @default '123456789012' */
  accountId?: string;
  /** Receives every alarm event CloudWatch sends to EventBridge (the default bus). */
  emit?: (event: AlarmStateChangeEvent) => void;
}

/** An EventBridge event CloudWatch sends, as EventBridge delivers it. */
export interface AlarmStateChangeEvent {
  version: '0';
  id: string;
  'detail-type': 'CloudWatch Alarm State Change';
  source: 'aws.cloudwatch';
  account: string;
  time: string;
  region: string;
  resources: string[];
  detail: Record<string, unknown>;
}

/** The running stand-in, with direct access for tests. */
export interface CloudWatchStandin extends Standin {
  /** The ARN an alarm of this name has here. */
  alarmArn(name: string): string;
}

const STATES: readonly AlarmState[] = ['OK', 'ALARM', 'INSUFFICIENT_DATA'];

/** CloudWatch's state timestamp format: `2026-01-02T10:35:00.000+0000`. */
const stateTimestamp = (date: Date) => date.toISOString().replace('Z', '+0000');

type Stat = { Metric?: Record<string, unknown>; Period?: unknown; Stat?: unknown };
const dimensionsOf = (list: unknown) =>
  Object.fromEntries(((list ?? []) as Array<{ Name: string; Value: string }>).map((d) => [d.Name, d.Value]));

/** An alarm's `detail.configuration` as the state change event carries it (dimensions as a map). */
function eventConfiguration(config: Record<string, unknown>): Record<string, unknown> {
  const description =
    typeof config.AlarmDescription === 'string' ? { description: config.AlarmDescription } : {};
  if (typeof config.AlarmRule === 'string') return { alarmRule: config.AlarmRule, ...description };
  const metricStat = (m: Record<string, unknown> | undefined, period: unknown, stat: unknown) => ({
    metric: { namespace: m?.Namespace, name: m?.MetricName, dimensions: dimensionsOf(m?.Dimensions) },
    period,
    stat,
  });
  const metrics = Array.isArray(config.Metrics)
    ? (config.Metrics as Array<Record<string, unknown>>).map((q) => ({
        id: q.Id,
        ...(q.MetricStat
          ? {
              metricStat: metricStat(
                (q.MetricStat as Stat).Metric,
                (q.MetricStat as Stat).Period,
                (q.MetricStat as Stat).Stat,
              ),
            }
          : { expression: q.Expression, ...(q.Label === undefined ? {} : { label: q.Label }) }),
        returnData: q.ReturnData ?? true,
      }))
    : [
        {
          id: randomUUID(),
          metricStat: metricStat(
            { Namespace: config.Namespace, MetricName: config.MetricName, Dimensions: config.Dimensions },
            config.Period,
            config.Statistic ?? config.ExtendedStatistic,
          ),
          returnData: true,
        },
      ];
  return { ...description, metrics };
}

/**
 * `StateReasonData` of a composite alarm whose transition these children triggered, in
 * CloudWatch's shape: `{"triggeringAlarms":[{"arn","state":{"value","timestamp"}}]}`.
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch-and-eventbridge.html
 */
export function compositeReasonData(
  children: ReadonlyArray<{ arn: string; state: AlarmState; timestamp: string }>,
): string {
  return JSON.stringify({
    triggeringAlarms: children.map((c) => ({
      arn: c.arn,
      state: { value: c.state, timestamp: c.timestamp },
    })),
  });
}

/** Starts the CloudWatch stand-in; point the SDK at it with `AWS_ENDPOINT_URL_CLOUDWATCH`. */
export async function startCloudWatchStandin(
  options: CloudWatchStandinOptions = {},
): Promise<CloudWatchStandin> {
  const region = options.region ?? 'us-east-1';
  const account = options.accountId ?? '123456789012';
  const alarms = new Map<string, StoredAlarm>();
  const arnOf = (name: string) => `arn:aws:cloudwatch:${region}:${account}:alarm:${name}`;

  const eventState = (state: StoredAlarm['state']) => ({
    value: state.value,
    reason: state.reason,
    ...(state.reasonData === undefined ? {} : { reasonData: state.reasonData }),
    timestamp: stateTimestamp(state.updated),
  });
  const stateChangeEvent = (
    name: string,
    alarm: StoredAlarm,
    previous: StoredAlarm['state'],
  ): AlarmStateChangeEvent => ({
    version: '0',
    id: randomUUID(),
    'detail-type': 'CloudWatch Alarm State Change',
    source: 'aws.cloudwatch',
    account,
    time: alarm.state.updated.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region,
    resources: [arnOf(name)],
    detail: {
      alarmName: name,
      state: eventState(alarm.state),
      previousState: eventState(previous),
      configuration: eventConfiguration(alarm.config),
    },
  });

  const put = (type: StoredAlarm['type'], input: Record<string, unknown>) => {
    const name = requireString(input, 'AlarmName');
    const existing = alarms.get(name);
    if (existing && existing.type !== type)
      throw new StandinError('ValidationError', `an alarm named ${name} of another type exists`);
    const { Tags: _tags, ...config } = input;
    alarms.set(name, {
      type,
      config: {
        ActionsEnabled: true,
        OKActions: [],
        AlarmActions: [],
        InsufficientDataActions: [],
        ...config,
        AlarmArn: arnOf(name),
        AlarmConfigurationUpdatedTimestamp: epochSeconds(new Date()),
      },
      state: existing?.state ?? {
        value: 'INSUFFICIENT_DATA',
        reason: 'Unchecked: Initial alarm creation',
        updated: new Date(),
      },
    });
    return {};
  };

  const view = (alarm: StoredAlarm) => ({
    ...alarm.config,
    StateValue: alarm.state.value,
    StateReason: alarm.state.reason,
    ...(alarm.state.reasonData === undefined ? {} : { StateReasonData: alarm.state.reasonData }),
    StateUpdatedTimestamp: epochSeconds(alarm.state.updated),
    StateTransitionedTimestamp: epochSeconds(alarm.state.updated),
  });

  const standin = await startStandin({
    service: 'CloudWatch',
    protocol: awsJsonProtocol({
      version: '1.0',
      targetPrefix: 'GraniteServiceVersion20100801',
      namespace: 'com.amazonaws.cloudwatch',
      queryCompatible: true,
    }),
    operations: {
      PutMetricAlarm: (input) => put('MetricAlarm', input),
      PutCompositeAlarm: (input) => put('CompositeAlarm', input),
      SetAlarmState(input) {
        const name = requireString(input, 'AlarmName');
        const value = requireString(input, 'StateValue') as AlarmState;
        if (!STATES.includes(value))
          throw new StandinError('InvalidParameterValue', `StateValue ${value} is not valid`);
        const alarm = alarms.get(name);
        if (!alarm) throw new StandinError('ResourceNotFound', `alarm ${name} does not exist`, 404);
        const reasonData = input.StateReasonData;
        if (reasonData !== undefined && typeof reasonData === 'string') {
          try {
            JSON.parse(reasonData);
          } catch {
            throw new StandinError('InvalidFormat', 'StateReasonData is not JSON');
          }
        }
        const previous = alarm.state;
        alarm.state = {
          value,
          reason: requireString(input, 'StateReason'),
          ...(typeof reasonData === 'string' ? { reasonData } : {}),
          updated: new Date(),
        };
        if (previous.value !== value) options.emit?.(stateChangeEvent(name, alarm, previous));
        return {};
      },
      DeleteAlarms(input) {
        for (const name of (input.AlarmNames as string[] | undefined) ?? []) alarms.delete(name);
        return {};
      },
      DescribeAlarms(input) {
        const names = input.AlarmNames as string[] | undefined;
        const prefix = input.AlarmNamePrefix as string | undefined;
        if (names && prefix)
          throw new StandinError(
            'InvalidParameterCombination',
            'AlarmNames and AlarmNamePrefix cannot be used together',
          );
        if (names && names.length > 100)
          throw new StandinError('InvalidParameterValue', 'AlarmNames has at most 100 members');
        const types = (input.AlarmTypes as string[] | undefined) ?? ['MetricAlarm'];
        const max = Number(input.MaxRecords ?? 50);
        if (!Number.isInteger(max) || max < 1 || max > 100)
          throw new StandinError('InvalidParameterValue', 'MaxRecords must be 1..100');
        const start = input.NextToken === undefined ? 0 : Number(input.NextToken);
        if (!Number.isInteger(start) || start < 0)
          throw new StandinError('InvalidNextToken', 'NextToken is not valid');
        const matching = [...alarms.entries()]
          .filter(([, a]) => types.includes(a.type))
          .filter(([name]) => (names ? names.includes(name) : prefix ? name.startsWith(prefix) : true))
          .filter(([, a]) => input.StateValue === undefined || a.state.value === input.StateValue)
          .sort(([a], [b]) => a.localeCompare(b));
        const page = matching.slice(start, start + max);
        const next = start + max < matching.length ? String(start + max) : undefined;
        return {
          MetricAlarms: page.filter(([, a]) => a.type === 'MetricAlarm').map(([, a]) => view(a)),
          CompositeAlarms: page.filter(([, a]) => a.type === 'CompositeAlarm').map(([, a]) => view(a)),
          ...(next ? { NextToken: next } : {}),
        };
      },
    },
  });
  return { ...standin, alarmArn: arnOf };
}
