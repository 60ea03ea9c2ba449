/**
 * The domain model shared by triage, the redrive workflow, the Slack approval and the CLI.
 * Shapes here are the contract between those parts; change them in one place.
 */
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

/**
 * An envelope: one DLQ message, preserved with everything needed to understand and redrive it.
 * Stored in DynamoDB under `DLQ#<dlqArn>` / `MSG#<messageId>` (see `table.ts`).
 */
export interface Envelope {
  dlqArn: string;
  /** SQS MessageId in the DLQ (changes on every redrive; never the idempotency key). */
  messageId: string;
  idempotencyKey: string;
  /** Where the key came from: the producer's id (attribute or JSON path), the SNS MessageId, or a hash. */
  keySource: 'attribute' | 'jsonPath' | 'snsMessageId' | 'hash';
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
  state: EnvelopeState;
  /** Why PARKED or DISCARDED. */
  stateReason?: string;
  /** Times the pipeline has redriven this message (from the `redrive-count` attribute). */
  redriveCount: number;
  firstSeenAt: string;
  lastSeenAt: string;
  incidentId?: string;
  /**
   * The inventory that saw the message last (an inventory session spans several invocations): a
   * message seen again by the same inventory is a duplicate delivery, not a second message.
   */
  inventoryId?: string;
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
}

/** Registration of a monitored DLQ: read by every function; written by the CDK construct. */
/** An integer in `min..max`. */
const intIn = (min: number, max: number) => z.number().check(z.int(), z.gte(min), z.lte(max));

export const QueueRegistration = z.strictObject({
  dlqArn: z
    .string()
    .check(
      z.regex(/^arn:aws[a-z-]*:sqs:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,75}(\.fifo)?$/, 'must be an SQS ARN'),
    ),
  owner: z.optional(z.string().check(z.minLength(1))),
  slackChannel: z.optional(z.string().check(z.minLength(1))),
  /** Slack user ids allowed to approve. Empty: nobody can approve from Slack. */
  approvers: z._default(z.array(z.string().check(z.minLength(1))), []),
  /** Where the producer's own id lives: a message attribute name, or a JSON path in the body. */
  producerKey: z.optional(
    z.union([
      z.strictObject({ attribute: z.string().check(z.minLength(1)) }),
      z.strictObject({
        jsonPath: z.string().check(z.regex(/^\$(\.[A-Za-z0-9_-]+)+$/, 'must look like $.a.b')),
      }),
    ]),
  ),
  sampleSize: z._default(intIn(1, 100), 5),
  /** Rates of the ramp, messages per second, each 1..500. */
  rampRates: z._default(z.array(intIn(1, 500)).check(z.minLength(1)), [5, 50, 200]),
  /** Seconds to dwell at each ramp step before the health gate. */
  dwellSeconds: z._default(intIn(1, 3600), 60),
  /** Redrive count at which a message is parked instead of redriven. */
  maxRedrives: z._default(intIn(1, 100), 3),
  parkingQueueArn: z.optional(z.string()),
  /** Allow inventorying a DLQ that has its own redrive policy (every receive counts toward it). */
  allowInventoryOfQueueWithRedrivePolicy: z._default(z.boolean(), false),
  /** Allow console starts that arrive pre-approved (`approvedBy`). */
  allowPreApproved: z._default(z.boolean(), false),
});
export type QueueRegistration = z.infer<typeof QueueRegistration>;
