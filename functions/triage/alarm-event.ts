/**
 * Alarm events, normalised.
 *
 * The same CloudWatch alarm transition reaches triage in two shapes:
 * - EventBridge "CloudWatch Alarm State Change": `detail.state`, `detail.previousState`,
 *   `detail.configuration.metrics[].metricStat.metric.dimensions` as an object map;
 * - SNS alarm action: `Records[0].Sns.Message` is a JSON *string*; `Trigger.Dimensions` (or
 *   `Trigger.Metrics[].MetricStat.Metric.Dimensions` for metric math) is a list of `{ name, value }`
 *   and `Region` is a display name ("US East (N. Virginia)"), so the region is always taken from the
 *   alarm ARN.
 *
 * Both become one {@link AlarmRecord} with the same `dedupeKey` (alarm ARN + state timestamp).
 * Other EventBridge alarm events (configuration changes) are recognised and reported as
 * not-a-state-change, so the caller can acknowledge them without side effects.
 *
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch-and-eventbridge.html
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html
 */
import type { AlarmRecord, CompositeAlarmInfo, TriggeringChild } from '#inventory/model.js';
import { InvalidInputError } from '#platform/errors.js';
import { formatIssues, parseOrThrow } from '#platform/middleware.js';
import * as z from '#platform/zod.js';

/** The detail-type of the only EventBridge alarm event triage acts on. */
export const STATE_CHANGE = 'CloudWatch Alarm State Change';

/**
 * SQS queue names: 1-80 characters of `A-Z a-z 0-9 - _`, a FIFO queue's ending in `.fifo` (within
 * the 80). Anything else in a QueueName dimension cannot name a queue.
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html
 */
export const QUEUE_NAME = /^(?=.{1,80}$)[A-Za-z0-9_-]+(\.fifo)?$/;
const queueNameProblem = (value: string) =>
  `must be an SQS queue name (1-80 characters of A-Z a-z 0-9 - _, optionally ending in .fifo), got ${JSON.stringify(value.slice(0, 100))}${value.length > 100 ? '...' : ''}`;

/** Alarm names are at most 255 characters; an ARN of one fits well under DynamoDB's 2048-byte key. */
const AlarmName = z.string().check(z.minLength(1), z.maxLength(255));
/** `2026-01-02T10:35:00.000+0000` in both shapes; bounded so it fits in a DynamoDB key. */
const StateTimestamp = z
  .string()
  .check(
    z.maxLength(64),
    z.regex(/^\d{4}-\d{2}-\d{2}T[0-9:.]+(Z|[+-]\d{2}:?\d{2})?$/, 'must be an ISO-8601 timestamp'),
  );

const AlarmArn = z
  .string()
  .check(
    z.maxLength(400),
    z.regex(/^arn:aws[a-z-]*:cloudwatch:[a-z0-9-]+:\d{12}:alarm:.+$/, 'must be a CloudWatch alarm ARN'),
  );
const AlarmState = z.enum(['ALARM', 'OK', 'INSUFFICIENT_DATA']);
const AccountId = z.string().check(z.regex(/^\d{12}$/, 'must be a 12-digit account id'));
/** A composite alarm's rule: at most 10,240 characters (PutCompositeAlarm). */
const AlarmRule = z.string().check(z.minLength(1), z.maxLength(10_240));
/** More children than this cannot come from CloudWatch (a rule has at most 100 alarms). */
const MAX_CHILDREN = 1000;
/** A bounded optional string (at most `max` characters). */
const optionalText = (max: number) => z.optional(z.string().check(z.maxLength(max)));

/** One entry of EventBridge `reasonData.triggeringAlarms`. */
const ReasonDataChild = z.looseObject({
  arn: AlarmArn,
  state: z.optional(z.looseObject({ value: AlarmState, timestamp: optionalText(64) })),
});

/** One entry of SNS `TriggeringChildren`: an object with Arn and State, or (older documentation) an ARN. */
const SnsChild = z.union([
  AlarmArn,
  z.looseObject({
    Arn: AlarmArn,
    State: z.optional(z.looseObject({ Value: AlarmState, Timestamp: optionalText(64) })),
  }),
]);

/** Any EventBridge event from CloudWatch (first pass: is it a state change at all?). */
const EventBridgeEnvelope = z.object({
  'detail-type': z.string().check(z.minLength(1)),
  source: z.literal('aws.cloudwatch'),
  detail: z.record(z.string(), z.unknown()),
});

const EbMetric = z.object({
  id: z.optional(z.string()),
  expression: z.optional(z.string()),
  metricStat: z.optional(
    z.looseObject({
      metric: z.looseObject({
        dimensions: z.optional(
          z.record(z.string(), z.string()).check(
            z.superRefine((dims: Record<string, string>, ctx) => {
              const name = dims.QueueName;
              if (name !== undefined && !QUEUE_NAME.test(name))
                ctx.addIssue({ code: 'custom', path: ['QueueName'], message: queueNameProblem(name) });
            }),
          ),
        ),
      }),
    }),
  ),
});

/** The EventBridge "CloudWatch Alarm State Change" event (fields triage reads). */
export const EventBridgeAlarmEvent = z.object({
  'detail-type': z.literal(STATE_CHANGE),
  source: z.literal('aws.cloudwatch'),
  account: AccountId,
  resources: z.array(AlarmArn).check(z.minLength(1, 'must hold the alarm ARN')),
  detail: z.object({
    alarmName: AlarmName,
    state: z.object({
      value: AlarmState,
      reason: z._default(z.string(), ''),
      timestamp: StateTimestamp,
      /** A JSON string; for a composite alarm `{"triggeringAlarms":[...]}`. */
      reasonData: optionalText(100_000),
      actionsSuppressedBy: optionalText(64),
      actionsSuppressedReason: optionalText(1024),
    }),
    previousState: z.optional(z.looseObject({ value: AlarmState })),
    configuration: z._default(
      z.looseObject({ metrics: z._default(z.array(EbMetric), []), alarmRule: z.optional(AlarmRule) }),
      { metrics: [] },
    ),
  }),
});
export type EventBridgeAlarmEvent = z.infer<typeof EventBridgeAlarmEvent>;

const Dimension = z.object({ name: z.string(), value: z.string() }).check(
  z.superRefine((d: { name: string; value: string }, ctx) => {
    if (d.name === 'QueueName' && !QUEUE_NAME.test(d.value))
      ctx.addIssue({ code: 'custom', path: ['value'], message: queueNameProblem(d.value) });
  }),
);

/** The alarm notification inside `Records[0].Sns.Message` (after JSON.parse). */
export const SnsAlarmMessage = z.object({
  AlarmName: AlarmName,
  AlarmArn,
  AWSAccountId: AccountId,
  NewStateValue: AlarmState,
  OldStateValue: z.optional(AlarmState),
  NewStateReason: z._default(z.string(), ''),
  StateChangeTime: StateTimestamp,
  // Composite alarms carry an AlarmRule and TriggeringChildren instead of a Trigger.
  Trigger: z._default(
    z.looseObject({
      Dimensions: z.nullish(z.array(Dimension)),
      Metrics: z.nullish(
        z.array(
          z.looseObject({
            Expression: z.nullish(z.string()),
            MetricStat: z.nullish(
              z.looseObject({ Metric: z.looseObject({ Dimensions: z.nullish(z.array(Dimension)) }) }),
            ),
          }),
        ),
      ),
    }),
    {},
  ),
  AlarmRule: z.nullish(AlarmRule),
  TriggeringChildren: z.nullish(z.array(SnsChild).check(z.maxLength(MAX_CHILDREN))),
});
export type SnsAlarmMessage = z.infer<typeof SnsAlarmMessage>;

/** The SNS-to-Lambda event (one record per invocation). */
export const SnsAlarmEvent = z.object({
  Records: z
    .array(
      z.object({
        EventSource: z.literal('aws:sns'),
        Sns: z.looseObject({ Message: z.string().check(z.minLength(1)) }),
      }),
    )
    .check(z.length(1, 'SNS delivers exactly one record per invocation')),
});

/** Result of {@link normaliseAlarmEvent}. */
export type NormalisedAlarmEvent =
  | { kind: 'state-change'; record: AlarmRecord }
  | { kind: 'not-a-state-change'; detailType: string };

/** The dedupe key of a transition: identical for the EventBridge and SNS copies. */
export function dedupeKeyOf(alarmArn: string, stateTimestamp: string): string {
  return `${alarmArn}@${stateTimestamp}`;
}

/** Region and account from an alarm ARN (`arn:aws:cloudwatch:<region>:<account>:alarm:<name>`). */
export function parseAlarmArn(alarmArn: string): { region: string; account: string } {
  const [, , , region = '', account = ''] = alarmArn.split(':');
  return { region, account };
}

function unique(names: Iterable<string>): string[] {
  return [...new Set([...names].filter((n) => n.length > 0))];
}

/**
 * A composite alarm's children must be in its account and Region (CloudWatch refuses others): a
 * child ARN elsewhere is a malformed event, never an alarm to look up somewhere else.
 */
function checkChildren(
  children: TriggeringChild[],
  compositeArn: string,
  field: (i: number) => string,
): void {
  const { region, account } = parseAlarmArn(compositeArn);
  const problems = children.flatMap((child, i) => {
    const at = parseAlarmArn(child.alarmArn);
    return at.region === region && at.account === account
      ? []
      : [
          `${field(i)}: child alarm ${child.alarmArn} is not in the composite alarm's Region ${region} and account ${account}`,
        ];
  });
  if (problems.length > 0) throw new InvalidInputError('invalid composite alarm event', problems);
}

/**
 * Children from EventBridge `detail.state.reasonData` (a JSON string). Content CloudWatch would
 * not write (no reasonData, not JSON, no `triggeringAlarms` list, an empty list) makes the
 * children unreadable, a named outcome; an entry of the wrong shape is malformed input.
 * @throws InvalidInputError naming `detail.state.reasonData.triggeringAlarms.<i>...`.
 */
function compositeFromEventBridge(
  event: EventBridgeAlarmEvent,
  alarmArn: string,
): CompositeAlarmInfo | undefined {
  const rule = event.detail.configuration.alarmRule;
  if (rule === undefined) return undefined;
  const state = event.detail.state;
  const info: CompositeAlarmInfo = {
    alarmRule: rule,
    triggeringChildren: null,
    ...(state.actionsSuppressedBy ? { actionsSuppressedBy: state.actionsSuppressedBy } : {}),
    ...(state.actionsSuppressedReason ? { actionsSuppressedReason: state.actionsSuppressedReason } : {}),
  };
  const field = 'detail.state.reasonData';
  if (state.reasonData === undefined) return { ...info, unreadableReason: `the event has no ${field}` };
  let data: unknown;
  try {
    data = JSON.parse(state.reasonData);
  } catch {
    return { ...info, unreadableReason: `${field} is not JSON` };
  }
  const list = (data as { triggeringAlarms?: unknown } | null)?.triggeringAlarms;
  if (!Array.isArray(list)) return { ...info, unreadableReason: `${field} has no triggeringAlarms list` };
  if (list.length === 0) return { ...info, unreadableReason: `${field}.triggeringAlarms is empty` };
  const parsed = z.array(ReasonDataChild).check(z.maxLength(MAX_CHILDREN)).safeParse(list);
  if (!parsed.success)
    throw new InvalidInputError(
      'invalid composite alarm event',
      formatIssues(parsed.error).map((issue) => `${field}.triggeringAlarms.${issue}`),
      parsed.error,
    );
  const children = parsed.data.map((c) => ({
    alarmArn: c.arn,
    state: c.state?.value ?? null,
    timestamp: c.state?.timestamp ?? null,
  }));
  checkChildren(children, alarmArn, (i) => `${field}.triggeringAlarms.${i}.arn`);
  return { ...info, triggeringChildren: children };
}

/** Children from the SNS message's `TriggeringChildren` (absent or empty: unreadable). */
function compositeFromSns(message: SnsAlarmMessage): CompositeAlarmInfo | undefined {
  if (!message.AlarmRule) return undefined;
  const list = message.TriggeringChildren ?? [];
  if (list.length === 0)
    return {
      alarmRule: message.AlarmRule,
      triggeringChildren: null,
      unreadableReason: `Records.0.Sns.Message.TriggeringChildren is ${message.TriggeringChildren ? 'empty' : 'missing'}`,
    };
  const children = list.map((c) =>
    typeof c === 'string'
      ? { alarmArn: c, state: null, timestamp: null }
      : { alarmArn: c.Arn, state: c.State?.Value ?? null, timestamp: c.State?.Timestamp ?? null },
  );
  checkChildren(children, message.AlarmArn, (i) => `Records.0.Sns.Message.TriggeringChildren.${i}`);
  return { alarmRule: message.AlarmRule, triggeringChildren: children };
}

function fromEventBridge(event: EventBridgeAlarmEvent): AlarmRecord {
  const alarmArn = event.resources[0] as string;
  const { region, account } = parseAlarmArn(alarmArn);
  const d = event.detail;
  const record: AlarmRecord = {
    alarmArn,
    alarmName: d.alarmName,
    account: account || event.account,
    region,
    newState: d.state.value,
    stateTimestamp: d.state.timestamp,
    reason: d.state.reason,
    queueNames: unique(d.configuration.metrics.map((m) => m.metricStat?.metric.dimensions?.QueueName ?? '')),
    dedupeKey: dedupeKeyOf(alarmArn, d.state.timestamp),
    via: 'eventbridge',
  };
  if (d.previousState) record.previousState = d.previousState.value;
  const composite = compositeFromEventBridge(event, alarmArn);
  if (composite) record.composite = composite;
  return record;
}

function fromSns(message: SnsAlarmMessage): AlarmRecord {
  const { region } = parseAlarmArn(message.AlarmArn);
  const dims = [
    ...(message.Trigger.Dimensions ?? []),
    ...(message.Trigger.Metrics ?? []).flatMap((m) => m.MetricStat?.Metric.Dimensions ?? []),
  ];
  const record: AlarmRecord = {
    alarmArn: message.AlarmArn,
    alarmName: message.AlarmName,
    account: message.AWSAccountId,
    region,
    newState: message.NewStateValue,
    stateTimestamp: message.StateChangeTime,
    reason: message.NewStateReason,
    queueNames: unique(dims.filter((d) => d.name === 'QueueName').map((d) => d.value)),
    dedupeKey: dedupeKeyOf(message.AlarmArn, message.StateChangeTime),
    via: 'sns',
  };
  if (message.OldStateValue) record.previousState = message.OldStateValue;
  const composite = compositeFromSns(message);
  if (composite) record.composite = composite;
  return record;
}

/**
 * Normalises an EventBridge or SNS alarm event. Pure: call it before any side effect.
 *
 * @param event - the raw Lambda event.
 * @returns the {@link AlarmRecord}, or `not-a-state-change` for other CloudWatch alarm events.
 * @throws InvalidInputError naming each bad field when the event is neither shape, the SNS
 *   message is not JSON, or required fields are missing.
 */
export function normaliseAlarmEvent(event: unknown): NormalisedAlarmEvent {
  if (event !== null && typeof event === 'object' && 'Records' in event) {
    const sns = parseOrThrow(SnsAlarmEvent, event, 'SNS alarm event');
    let message: unknown;
    try {
      message = JSON.parse(sns.Records[0]?.Sns.Message ?? '');
    } catch (cause) {
      throw new InvalidInputError('invalid SNS alarm event', ['Records.0.Sns.Message: is not JSON'], cause);
    }
    const parsed = SnsAlarmMessage.safeParse(message);
    if (!parsed.success)
      throw new InvalidInputError(
        'invalid SNS alarm event',
        formatIssues(parsed.error).map((issue) => `Records.0.Sns.Message.${issue}`),
        parsed.error,
      );
    return { kind: 'state-change', record: fromSns(parsed.data) };
  }
  const envelope = EventBridgeEnvelope.safeParse(event);
  if (!envelope.success)
    throw new InvalidInputError(
      'invalid alarm event: neither an EventBridge CloudWatch alarm event nor an SNS alarm notification',
      formatIssues(envelope.error),
      envelope.error,
    );
  if (envelope.data['detail-type'] !== STATE_CHANGE)
    return { kind: 'not-a-state-change', detailType: envelope.data['detail-type'] };
  return {
    kind: 'state-change',
    record: fromEventBridge(parseOrThrow(EventBridgeAlarmEvent, event, 'alarm event')),
  };
}

/**
 * The queue URL an SQS queue name implies in the alarm's region and account, in the standard
 * endpoint form. Triage resolves the real URL with GetQueueUrl; this is the expected value.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-queue-message-identifiers.html
 */
export function impliedQueueUrl(region: string, account: string, queueName: string): string {
  return `https://sqs.${region}.amazonaws.com/${account}/${queueName}`;
}

/** The SQS ARN of a queue in the alarm's region and account. */
export function queueArnOf(region: string, account: string, queueName: string): string {
  return `arn:aws:sqs:${region}:${account}:${queueName}`;
}
