/**
 * The domain model shared by triage, the redrive workflow, the Slack approval and the CLI.
 * Shapes here are the contract between those parts; change them in one place.
 */
import * as z from '#platform/zod.js';

// The queue registration is shared with the `MonitoredDlq` construct: one schema, in the package.
export { AccessRole, MessageOriginRegistration, QueueRegistration } from '@dlq-redrive/contract';

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
   * approval, the ramp's gate, Reconcile): the message dead-lettered after triage.
   */
  lateArrival?: boolean;
}

/**
 * An alarm transition, normalised from either the EventBridge or the SNS shape.
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
