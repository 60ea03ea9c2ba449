/**
 * The domain model shared by triage, the redrive workflow, the Slack approval and the CLI.
 * Shapes here are the contract between those parts; change them in one place.
 */
import { parseSqsArn, SQS_QUEUE_ARN_PATTERN } from '#platform/sqs-arn.js';
import * as z from '#platform/zod.js';

/** How a failure is classified. Rules that decide it are data (see `classification-rules`). */
export const Classification = z.enum(['transient', 'permanent', 'poison', 'systemic', 'unknown']);
export type Classification = z.infer<typeof Classification>;

/**
 * Where an envelope stands. Every inventoried envelope ends in exactly one of these;
 * reconciliation checks that the counts add up.
 * - IN_DLQ: still in the DLQ (the starting state).
 * - REDRIVEN: sent back to its source queue (sample redrive or move task).
 * - PARKED: moved to the parking queue, kept out of the bulk move, with a reason.
 * - DISCARDED: deleted by an explicit, recorded decision.
 */
export const EnvelopeState = z.enum(['IN_DLQ', 'REDRIVEN', 'PARKED', 'DISCARDED']);
export type EnvelopeState = z.infer<typeof EnvelopeState>;

/** An SQS message attribute as received, binary values as base64 text. */
export const StoredMessageAttribute = z.object({
  dataType: z.string(),
  stringValue: z.optional(z.string()),
  /** Base64 of the attribute's bytes, for `Binary` (and `Binary.*`) data types. */
  binaryValueBase64: z.optional(z.string()),
});
export type StoredMessageAttribute = z.infer<typeof StoredMessageAttribute>;

/** The kinds of origin the recording mover can send back to. */
export const ORIGIN_KINDS = ['sqs', 'sns', 'eventbridge', 'lambda'] as const;
export type OriginKind = (typeof ORIGIN_KINDS)[number];

/** How the message reached the DLQ. */
export type OriginVia =
  | 'redrive-policy'
  | 'subscription-dlq'
  | 'rule-target-dlq'
  | 'async-dlq'
  | 'on-failure-destination';

/** An extended-client message's S3 pointer (`Envelope.payload`). */
export interface PayloadPointer {
  bucket: string;
  key: string;
  /** The payload's size from `ExtendedPayloadSize` / `SQSLargePayloadSize`, bytes; null without it. */
  sizeBytes: number | null;
  pointerClass:
    | 'software.amazon.payloadoffloading.PayloadS3Pointer'
    | 'com.amazon.sqs.javamessaging.MessageS3Pointer';
}

/** A message's origin, as stored on its envelope (`Envelope.origin`). */
export interface MessageOrigin {
  kind: OriginKind;
  /** Where it goes back to (queue, topic, event bus, function), or null when the evidence does not say. */
  arn: string | null;
  via: OriginVia;
  /** EventBridge: the rule whose target failed. */
  ruleArn?: string;
  /** EventBridge: the target that failed. */
  targetArn?: string;
}

/**
 * An envelope: one DLQ message, preserved with everything needed to understand and redrive it.
 * Stored in DynamoDB under `DLQ#<dlqArn>` / `MSG#<messageId>` (see `table.ts`).
 */
export interface Envelope {
  dlqArn: string;
  /** SQS MessageId in the DLQ (changes on every redrive; never the idempotency key). */
  messageId: string;
  idempotencyKey: string;
  /**
   * Where the key came from: the producer's id (attribute or JSON path), the SNS MessageId, an
   * EventBridge event's content, or a hash.
   */
  keySource: 'attribute' | 'jsonPath' | 'snsMessageId' | 'eventContent' | 'hash';
  /** DeadLetterQueueSourceArn, or 'unknown' when SQS did not say (message sent straight to the DLQ). */
  sourceArn: string;
  /** UTF-8 byte length of the body. */
  bodyBytes: number;
  /** SHA-256 of the body's UTF-8 bytes, hex. */
  bodySha256: string;
  /** True when the body is stored in chunk items instead of inline. */
  bodyChunked: boolean;
  /** Number of chunk items (0 when inline). */
  bodyChunks: number;
  messageAttributes: Record<string, StoredMessageAttribute>;
  /** System attributes as SQS returned them (ApproximateReceiveCount, SentTimestamp, ...). */
  systemAttributes: Record<string, string>;
  receiveCount: number;
  /** SentTimestamp, epoch milliseconds. */
  sentAt: number;
  /** When the message expires from the DLQ, epoch milliseconds. */
  retentionDeadline: number;
  /** True when the deadline is an estimate (FIFO DLQs: time of entry is not reported). */
  retentionDeadlineApproximate: boolean;
  /** Failure context attached by the consumer, when present. */
  failure: { errorClass?: string; errorMessage?: string; fingerprint: string };
  classification: Classification;
  /** 'sns-notification' when the body is a non-raw SNS envelope, else 'raw'. */
  bodyFormat: 'raw' | 'sns-notification';
  sns?: { topicArn: string; messageId: string; messageAttributes: Record<string, StoredMessageAttribute> };
  /**
   * Where the message came from and goes back to (origin.ts): its source queue, or the SNS topic,
   * EventBridge bus or Lambda function of a DLQ no SQS redrive policy feeds. Absent when nothing
   * says (sent straight to the DLQ), and on envelopes stored before it existed.
   */
  origin?: MessageOrigin;
  /**
   * Set when the DLQ has its own RedrivePolicy (it dead-letters onward): `receiveCount` then
   * includes the pipeline's own peeks, each of which counts toward `maxReceiveCount`, and the
   * pipeline never peeks a message past it (inventory/receive-budget.ts).
   */
  dlqRedrivePolicy?: {
    maxReceiveCount: number;
    deadLetterTargetArn: string;
    receiveCountIncludesPipelinePeeks: true;
  };
  /**
   * The S3 object an extended-client body points to (payload-pointer.ts). The body is stored as
   * received (the pointer), never the object: the pipeline redrives the pointer and never reads
   * or deletes the object. Before any redrive each pointer is checked with HeadObject; a message
   * whose object is gone is parked (docs/redrive-workflow.md, "Extended-client messages").
   */
  payload?: PayloadPointer;
  /**
   * When Preflight (or the recheck) found the payload object gone, ISO 8601; cleared when it is
   * back. Park parks such a message and SampleRedrive never samples it.
   */
  payloadGoneAt?: string;
  state: EnvelopeState;
  /** Why PARKED or DISCARDED; on IN_DLQ, why the recording mover left it (`PAYLOAD_UNCHECKED`, functions/mover). */
  stateReason?: string;
  /** Times the pipeline has redriven this message (from the `redrive-count` attribute). */
  redriveCount: number;
  firstSeenAt: string;
  lastSeenAt: string;
  incidentId?: string;
  /**
   * The inventory that saw the message last and the step (invocation) that stored it: an
   * inventory spans several invocations, and a message a later step of the same inventory sees
   * again is a duplicate delivery, not a second message. (A retry of a failed step has the same
   * number, so what the failed attempt stored is counted once, by the retry.)
   */
  inventoryId?: string;
  inventoryStep?: number;
  /**
   * True when the envelope was first stored by an inventory after triage's (the recheck after the
   * approval, the ramp's gate, Reconcile): the message dead-lettered after triage (case N02).
   */
  lateArrival?: boolean;
}

/**
 * An alarm transition, normalised from either the EventBridge or the SNS shape (case C01).
 */
export interface AlarmRecord {
  alarmArn: string;
  alarmName: string;
  account: string;
  /** Region code taken from the alarm ARN (never the SNS display name). */
  region: string;
  newState: 'ALARM' | 'OK' | 'INSUFFICIENT_DATA';
  previousState?: 'ALARM' | 'OK' | 'INSUFFICIENT_DATA';
  /** State-change time exactly as CloudWatch wrote it (e.g. 2026-01-02T10:35:00.000+0000). */
  stateTimestamp: string;
  reason: string;
  /** Every QueueName dimension found among the alarm's metrics (empty for SEARCH expressions). */
  queueNames: string[];
  /** Identical for the EventBridge and SNS copies of the same transition. */
  dedupeKey: string;
  via: 'eventbridge' | 'sns';
  /** Set when the alarm is a composite alarm (its event carries an alarm rule, not metrics). */
  composite?: CompositeAlarmInfo;
}

/** One child alarm a composite alarm's transition names as triggering it. */
export interface TriggeringChild {
  alarmArn: string;
  /** The child's state when the composite was evaluated, as the event says. */
  state: 'ALARM' | 'OK' | 'INSUFFICIENT_DATA' | null;
  timestamp: string | null;
}

/**
 * What a composite alarm's event says about its children (EventBridge
 * `detail.state.reasonData.triggeringAlarms`, SNS `TriggeringChildren`).
 * @see https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Create_Composite_Alarm.html
 */
export interface CompositeAlarmInfo {
  alarmRule: string;
  /** The triggering children, or null when the event does not let them be read. */
  triggeringChildren: TriggeringChild[] | null;
  /** Why the children could not be read (set when `triggeringChildren` is null). */
  unreadableReason?: string;
  /** `WaitPeriod`, `ExtensionPeriod` or `Alarm` when CloudWatch suppressed the composite's actions. */
  actionsSuppressedBy?: string;
  actionsSuppressedReason?: string;
}

/** Per-cause group in an incident summary. */
export interface CauseGroup {
  fingerprint: string;
  errorClass: string;
  count: number;
  classification: Classification;
  exampleMessageId: string;
  exampleReason: string;
}

/** The incident summary written by triage and shown in the approval. */
export interface IncidentSummary {
  messageCount: number;
  countBySource: Record<string, number>;
  causes: CauseGroup[];
  countByClassification: Record<Classification, number>;
  /** Age of the oldest message, milliseconds, at inventory time. */
  oldestMessageAgeMs: number | null;
  /**
   * SentTimestamp of the oldest message, epoch milliseconds: since when the consumer has been
   * failing (absent on summaries written before it was added: derive it from the age).
   */
  oldestSentAt?: number | null;
  /** Earliest retention deadline, epoch milliseconds. */
  earliestRetentionDeadline: number | null;
  /** Messages whose retention deadline is less than 24 h away. */
  expiringWithin24h: number;
  /** True when the inventory stopped early (budget or time) and a later run continues it. */
  partial: boolean;
  /** What the inventory covered; absent on summaries written before inventories spanned invocations. */
  coverage?: InventoryCoverage;
}

/**
 * How much of a DLQ an inventory covered (docs/triage.md "Inventory on the engine"). A DLQ deeper
 * than one inventory may hold invisible is inventoried as a sample: `sampled` is true and `drawn`
 * says how the sample was drawn; the messages not seen have no envelope (docs/contracts.md
 * "Messages triage could not see").
 */
export interface InventoryCoverage {
  /** Visible + in-flight messages of the DLQ when the inventory started (SQS's approximate counts). */
  depthAtStart: number;
  /** Messages inventoried (distinct). */
  inventoried: number;
  /** True once the inventory ended (every message seen, or the hold limit reached). */
  complete: boolean;
  /** True when the DLQ was deeper than the inventory could hold: the summary is a sample. */
  sampled: boolean;
  /** How the sample was drawn, in words; null when not sampled. */
  drawn: string | null;
  /** Most messages the inventory may hold invisible at once. */
  holdLimit: number;
  /** Lambda invocations the inventory took. */
  invocations: number;
}

const ARN_REGION = '[a-z]{2}(?:-[a-z]+)+-\\d';
/** An SNS topic ARN (standard or FIFO). */
export const SNS_TOPIC_ARN = new RegExp(
  `^arn:aws[a-z-]*:sns:${ARN_REGION}:\\d{12}:[A-Za-z0-9_-]{1,256}(\\.fifo)?$`,
);
/** An EventBridge event bus ARN. */
export const EVENT_BUS_ARN = new RegExp(
  `^arn:aws[a-z-]*:events:${ARN_REGION}:\\d{12}:event-bus/[A-Za-z0-9._/-]{1,256}$`,
);
/** A Lambda function ARN, optionally with a version or alias. */
export const LAMBDA_FUNCTION_ARN = new RegExp(
  `^arn:aws[a-z-]*:lambda:${ARN_REGION}:\\d{12}:function:[A-Za-z0-9_-]{1,64}(:[A-Za-z0-9$_-]{1,128})?$`,
);
/** An IAM role ARN. */
export const IAM_ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[A-Za-z0-9+=,.@_/-]{1,512}$/;

/** An integer in `min..max`. */
const intIn = (min: number, max: number) =>
  z.number().check(z.int(`must be an integer ${min}..${max}`), z.gte(min), z.lte(max));

const returnWindow = z.optional(intIn(0, 86_400));

/** The registered origin of a DLQ that no SQS redrive policy feeds (docs/contracts.md, "The recording mover"). */
export const MessageOriginRegistration = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('sns'),
    topicArn: z.string().check(z.regex(SNS_TOPIC_ARN, 'must be an SNS topic ARN')),
    returnWindowSeconds: returnWindow,
  }),
  z.strictObject({
    kind: z.literal('eventbridge'),
    eventBusArn: z.string().check(z.regex(EVENT_BUS_ARN, 'must be an EventBridge event bus ARN')),
    returnWindowSeconds: returnWindow,
  }),
  z.strictObject({
    kind: z.literal('lambda'),
    functionArn: z.string().check(z.regex(LAMBDA_FUNCTION_ARN, 'must be a Lambda function ARN')),
    returnWindowSeconds: returnWindow,
  }),
]);
export type MessageOriginRegistration = z.infer<typeof MessageOriginRegistration>;

/** A role the pipeline assumes for targets in another account (and Region). */
export const AccessRole = z.strictObject({
  accountId: z.string().check(z.regex(/^\d{12}$/, 'must be a 12-digit account id')),
  region: z.optional(z.string().check(z.regex(new RegExp(`^${ARN_REGION}$`), 'must be a Region code'))),
  roleArn: z.string().check(z.regex(IAM_ROLE_ARN, 'must be an IAM role ARN')),
  /** The external id the role's trust policy requires, if any. */
  externalId: z.optional(
    z.string().check(z.regex(/^[\w+=,.@:/-]{2,1224}$/, 'must be 2-1224 of \\w+=,.@:/-')),
  ),
});
export type AccessRole = z.infer<typeof AccessRole>;

/** StartMessageMoveTask's cap, messages per second. */
const MAX_RATE = 500;
/** Most ramp steps: each costs a cancel, a start and at least one dwell. */
const MAX_RAMP_STEPS = 10;
/** Most Slack approvers of one queue. */
const MAX_APPROVERS = 100;
/** Most source queues a registration names. */
const MAX_SOURCE_QUEUES = 100;

/**
 * Control, format (bidirectional overrides, zero-width), surrogate and separator characters: a
 * name shown in Slack and in the report must read as what it is.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;

/** A non-blank string of at most `max` characters, without control or invisible characters. */
const text = (max: number) =>
  z.string().check(
    z.minLength(1, 'must not be empty'),
    z.maxLength(max, `must be at most ${max} characters`),
    z.refine((v) => v.trim().length > 0, 'must not be blank'),
    z.refine((v) => !INVISIBLE.test(v), 'must not contain control or invisible characters'),
  );

const sqsArn = (what: string) =>
  z
    .string()
    .check(
      z.regex(SQS_QUEUE_ARN_PATTERN, `must be ${what} (arn:aws:sqs:<region>:<account-id>:<queue-name>)`),
    );

/**
 * A Slack channel id: `C` (public), `G` (private) or `D` (direct message) and 8-20 capital letters
 * or digits, e.g. `C0123456789`; not a `#name`.
 * @see https://api.slack.com/types/conversation
 */
export const SLACK_CHANNEL_ID = /^[CGD][A-Z0-9]{8,20}$/;
/**
 * A Slack user id: `U` or `W` (Enterprise Grid) and 8-20 capital letters or digits, e.g. `U0123456789`.
 * @see https://api.slack.com/types/user
 */
export const SLACK_USER_ID = /^[UW][A-Z0-9]{8,20}$/;

/**
 * An SQS message attribute name: 1-256 of `A-Za-z0-9_-.`, not starting with `AWS.` or `Amazon.`
 * (any case), no leading, trailing or doubled period.
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-metadata.html
 */
const ATTRIBUTE_NAME = /^(?!(?:aws|amazon)\.)(?!\.)(?!.*\.\.)[A-Za-z0-9_.-]{1,256}(?<!\.)$/i;

/** What a registration's cross-field checks find, each naming its field. */
function registrationProblems(input: {
  dlqArn: unknown;
  rampRates: unknown;
  approvers: unknown;
  parkingQueueArn?: unknown;
  sourceQueueArns?: unknown;
}): Array<{ path: PropertyKey[]; message: string }> {
  const problems: Array<{ path: PropertyKey[]; message: string }> = [];
  const strings = (v: unknown) =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  const r = {
    dlqArn: typeof input.dlqArn === 'string' ? input.dlqArn : '',
    rampRates: Array.isArray(input.rampRates) ? input.rampRates.filter((x) => typeof x === 'number') : [],
    approvers: Array.isArray(input.approvers) ? input.approvers : [],
    parkingQueueArn: typeof input.parkingQueueArn === 'string' ? input.parkingQueueArn : undefined,
    sourceQueueArns: strings(input.sourceQueueArns),
  };
  // Sizes are checked here, not with zod's length checks: a failed length check would stop the
  // other cross-field checks, and every problem is reported at once.
  if (r.rampRates.length === 0)
    problems.push({ path: ['rampRates'], message: 'must have at least one rate' });
  if (r.rampRates.length > MAX_RAMP_STEPS)
    problems.push({ path: ['rampRates'], message: `must have at most ${MAX_RAMP_STEPS} steps` });
  if (r.approvers.length > MAX_APPROVERS)
    problems.push({ path: ['approvers'], message: `must list at most ${MAX_APPROVERS} approvers` });
  if (r.rampRates.some((rate, i) => i > 0 && rate <= (r.rampRates[i - 1] as number)))
    problems.push({
      path: ['rampRates'],
      message: 'must be strictly ascending',
    });
  const seen = new Set<unknown>();
  for (const [i, id] of r.approvers.entries()) {
    if (seen.has(id) && typeof id === 'string')
      problems.push({ path: ['approvers', i], message: `${id} is listed twice` });
    seen.add(id);
  }
  const dlq = parseSqsArn(r.dlqArn);
  const sources = r.sourceQueueArns;
  for (const [i, arn] of sources.entries()) {
    const source = parseSqsArn(arn);
    if (arn === r.dlqArn)
      problems.push({ path: ['sourceQueueArns', i], message: 'must not be the DLQ itself' });
    else if (dlq && source && source.fifo !== dlq.fifo)
      problems.push({
        path: ['sourceQueueArns', i],
        message: `must be the DLQ's queue type (${dlq.fifo ? 'FIFO' : 'standard'})`,
      });
  }
  const parking = r.parkingQueueArn === undefined ? undefined : parseSqsArn(r.parkingQueueArn);
  if (dlq && parking && r.parkingQueueArn !== undefined) {
    const field = ['parkingQueueArn'];
    if (r.parkingQueueArn === r.dlqArn)
      problems.push({ path: field, message: 'must not be the DLQ itself: parked messages would stay in it' });
    else if (sources.includes(r.parkingQueueArn))
      problems.push({
        path: field,
        message: 'must not be a source queue of the DLQ: parked poison would go back to its consumer',
      });
    if (parking.fifo !== dlq.fifo)
      problems.push({
        path: field,
        message: `must be a ${dlq.fifo ? 'FIFO' : 'standard'} queue like the DLQ (given a ${parking.fifo ? 'FIFO' : 'standard'} queue)`,
      });
    if (
      parking.accountId !== dlq.accountId ||
      parking.region !== dlq.region ||
      parking.partition !== dlq.partition
    )
      problems.push({
        path: field,
        message: `must be in the DLQ's account and Region (${dlq.accountId}, ${dlq.region}; given ${parking.accountId}, ${parking.region})`,
      });
  }
  return problems;
}

/**
 * Registration of a monitored DLQ: read by every function, written by the `MonitoredDlq` construct
 * (or the CLI). One schema decides what can work, field by field, before anything is stored or
 * deployed: a registration that fails it is refused naming each field (the construct at synth, the
 * registry on put and on read).
 */
export const QueueRegistration = z
  .strictObject({
    dlqArn: sqsArn('an SQS queue ARN'),
    owner: z.optional(text(256)),
    slackChannel: z.optional(
      z
        .string()
        .check(
          z.regex(
            SLACK_CHANNEL_ID,
            'must be a Slack channel id: C, G or D and 8-20 capital letters or digits (e.g. C0123456789), not a #name',
          ),
        ),
    ),
    /** Slack user ids allowed to approve (at most 100). Empty: nobody can approve from Slack. */
    approvers: z._default(
      z.array(
        z
          .string()
          .check(
            z.regex(
              SLACK_USER_ID,
              'must be a Slack user id: U or W and 8-20 capital letters or digits (e.g. U0123456789)',
            ),
          ),
      ),
      [],
    ),
    /** Where the producer's own id lives: a message attribute name, or a JSON path in the body. */
    producerKey: z.optional(
      z.union([
        z.strictObject({
          attribute: z
            .string()
            .check(
              z.regex(
                ATTRIBUTE_NAME,
                'must be an SQS message attribute name (1-256 of A-Za-z0-9_-., not starting with AWS. or Amazon.)',
              ),
            ),
        }),
        z.strictObject({
          jsonPath: z
            .string()
            .check(
              z.maxLength(256, 'must be at most 256 characters'),
              z.regex(/^\$(\.[A-Za-z0-9_-]+)+$/, 'must look like $.a.b'),
            ),
        }),
      ]),
    ),
    sampleSize: z._default(intIn(1, 100), 5),
    /** Rates of the ramp, messages per second: 1-10 steps, strictly ascending, each 1..500. */
    rampRates: z._default(z.array(intIn(1, MAX_RATE)), [5, 50, 200]),
    /** Seconds to dwell at each ramp step before the health gate. */
    dwellSeconds: z._default(intIn(1, 3600), 60),
    /** Redrive count at which a message is parked instead of redriven. */
    maxRedrives: z._default(intIn(1, 100), 3),
    /**
     * Where poison goes: an SQS queue ARN in the DLQ's account and Region, of its type, neither
     * the DLQ nor one of its source queues. @default the pipeline's parking queue
     */
    parkingQueueArn: z.optional(sqsArn('an SQS queue ARN')),
    /**
     * The source queues whose redrive policy names this DLQ (the construct writes them): the
     * parking queue must not be one of them.
     */
    sourceQueueArns: z.optional(
      z
        .array(sqsArn('an SQS queue ARN'))
        .check(z.maxLength(MAX_SOURCE_QUEUES, `must list at most ${MAX_SOURCE_QUEUES} queues`)),
    ),
    /** Allow inventorying a DLQ that has its own redrive policy (every receive counts toward it). */
    allowInventoryOfQueueWithRedrivePolicy: z._default(z.boolean(), false),
    /** Allow console starts that arrive pre-approved (`approvedBy`). */
    allowPreApproved: z._default(z.boolean(), false),
    /**
     * What feeds the DLQ when it is not an SQS queue's redrive policy: an SNS subscription, an
     * EventBridge rule target, or a Lambda function's async invocations (DLQ or on-failure
     * destination). The recording mover sends the messages back there. `returnWindowSeconds`: how
     * long a message sent back can take to dead-letter again (the subscription's delivery retries,
     * the target's retry policy, the function's retries and their backoff).
     */
    origin: z.optional(MessageOriginRegistration),
    /**
     * IAM roles the pipeline assumes to reach a target in another account or Region than the DLQ
     * (`region` absent: any Region of that account). A target elsewhere without one is refused.
     */
    accessRoles: z.optional(z.array(AccessRole)),
  })
  .check(
    z.superRefine(
      (r, ctx) => {
        for (const p of registrationProblems(r))
          ctx.addIssue({ code: 'custom', message: p.message, path: p.path, input: r });
      },
      // Also when a field failed: every problem is reported at once (the value may then be only
      // partly of the right types, which registrationProblems checks for).
      { when: () => true },
    ),
  );
export type QueueRegistration = z.infer<typeof QueueRegistration>;
