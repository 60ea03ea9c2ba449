/**
 * Builds an {@link Envelope} from one received DLQ message (DESIGN.md "Raw bytes first").
 *
 * The body is kept byte-exact: its UTF-8 bytes travel beside the envelope as `body` and the store
 * writes them as DynamoDB Binary (inline, or in chunk items when large). Message
 * attributes keep their DataType (custom suffixes such as `Number.int` included) and binary values
 * as base64. Byte lengths are UTF-8 bytes, never JS string length.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_Message.html
 */
import type { Message } from '@aws-sdk/client-sqs';
import { InvalidInputError } from '#platform/errors.js';
import { classifyMessage, fingerprint } from './classification.js';
import {
  type ClassificationRule,
  DEFAULT_FAILURE_ATTRIBUTES,
  DEFAULT_RULES,
  type FailureAttributeNames,
} from './classification-rules.js';
import {
  deriveIdempotencyKey,
  type KeyInput,
  parseSnsNotification,
  sha256Hex,
  toStoredAttributes,
} from './idempotency-key.js';
import type { Envelope, QueueRegistration, StoredMessageAttribute } from './model.js';
import { originFailure, originOf } from './origin.js';
import { parsePayloadPointer } from './payload-pointer.js';
import { retentionDeadline } from './retention.js';

/**
 * Bodies up to this many UTF-8 bytes are stored inside the envelope item. Larger ones go to chunk
 * items, so the envelope item (body + attributes + metadata) stays well under 400 KB.
 */
export const INLINE_BODY_MAX_BYTES = 64 * 1024;

/** Size of one body chunk item's data, bytes (a chunk item stays under DynamoDB's 400 KB). */
export const BODY_CHUNK_BYTES = 300 * 1024;

/** An envelope plus the raw body bytes the store persists (Binary). */
export interface EnvelopeWrite {
  envelope: Envelope;
  /** The body's UTF-8 bytes, exactly as received. */
  body: Uint8Array;
}

/** Context shared by every message of one DLQ scan. */
export interface EnvelopeContext {
  dlqArn: string;
  /** True for a FIFO DLQ. */
  fifo: boolean;
  /** The DLQ's MessageRetentionPeriod, seconds. */
  retentionPeriodSeconds: number;
  /** Scan time, epoch milliseconds (firstSeenAt / lastSeenAt). */
  now: number;
  registration: Pick<QueueRegistration, 'producerKey' | 'origin'>;
  incidentId?: string;
  /**
   * The inventory that sees the message and its step (invocation) number, set on the envelope as
   * `inventoryId` / `inventoryStep`: a later step storing it again is a duplicate delivery.
   */
  inventory?: { id: string; step: number };
  /** The message dead-lettered after triage's inventory (set by later inventories). */
  lateArrival?: boolean;
  /** The DLQ's own RedrivePolicy, when it has one (the envelope says its count includes the pipeline's peeks). */
  dlqRedrivePolicy?: { maxReceiveCount: number; deadLetterTargetArn: string } | null;
  /** Where consumers put failure reasons. @default DEFAULT_FAILURE_ATTRIBUTES */
  failureAttributes?: FailureAttributeNames;
  /** Message classification rules. @default DEFAULT_RULES */
  rules?: readonly ClassificationRule[];
}

function lookup(
  names: readonly string[],
  ...sources: Array<Record<string, StoredMessageAttribute> | undefined>
): string | undefined {
  for (const source of sources) {
    if (!source) continue;
    for (const name of names) {
      const value = source[name]?.stringValue;
      if (value !== undefined && value.trim() !== '') return value;
    }
  }
  return undefined;
}

function isJson(text: string): boolean {
  const t = text.trimStart();
  if (!(t.startsWith('{') || t.startsWith('['))) return false;
  try {
    JSON.parse(t);
    return true;
  } catch {
    return false;
  }
}

function positiveInt(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return Number.isFinite(n) && n >= 0 ? Math.trunc(n) : fallback;
}

/** Longest error class kept in `failure`, characters. */
export const MAX_ERROR_CLASS_CHARS = 256;
/** Longest failure reason kept in `failure` (and fingerprinted), characters. */
export const MAX_ERROR_MESSAGE_CHARS = 4096;

/** The first `max` UTF-16 units of a string, without leaving half of a surrogate pair at the end. */
export function cutText(value: string, max: number): string {
  if (value.length <= max) return value;
  const last = value.charCodeAt(max - 1);
  return value.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

function cut(value: string | undefined, max: number): string | undefined {
  return value === undefined ? value : cutText(value, max);
}

/**
 * Turns one received DLQ message into an envelope and its body bytes.
 *
 * @param message - ReceiveMessage output, received with `MessageAttributeNames: ['All']` and
 *   system attributes (`AttributeNames` + `MessageSystemAttributeNames` = `['All']`).
 * @param ctx - the DLQ's facts and the scan time.
 * @throws InvalidInputError naming `MessageId` when the message has none (SQS always sends one).
 */
export function buildEnvelope(message: Message, ctx: EnvelopeContext): EnvelopeWrite {
  if (!message.MessageId) throw new InvalidInputError('invalid SQS message', ['MessageId: is required']);
  const bodyText = message.Body ?? '';
  const body = new Uint8Array(Buffer.from(bodyText, 'utf8'));
  const systemAttributes: Record<string, string> = { ...(message.Attributes ?? {}) };
  const messageAttributes = toStoredAttributes(message.MessageAttributes);
  const sns = parseSnsNotification(bodyText);
  const sourceArn = systemAttributes.DeadLetterQueueSourceArn ?? 'unknown';

  const keyInput: KeyInput = { sourceArn, body: bodyText, messageAttributes };
  if (ctx.registration.producerKey) keyInput.producerKey = ctx.registration.producerKey;
  if (sns) {
    keyInput.snsMessageId = sns.messageId;
    keyInput.snsMessageAttributes = sns.messageAttributes;
  }
  const { key, keySource } = deriveIdempotencyKey(keyInput);

  const evidence = {
    body: bodyText,
    messageAttributes,
    sourceArn: systemAttributes.DeadLetterQueueSourceArn,
  };
  const origin = originOf(evidence, ctx.registration.origin);
  // The consumer's own attributes first; else what the origin's service attached (EventBridge's
  // ERROR_CODE, Lambda's and SNS's ErrorCode/ErrorMessage, an on-failure record's condition).
  const fromOrigin = originFailure(evidence, origin);
  const names = ctx.failureAttributes ?? DEFAULT_FAILURE_ATTRIBUTES;
  // Cut: these are copied into the envelope beside the attributes they come from, and a stack
  // trace in an attribute would otherwise push the item past DynamoDB's 400 KB.
  const errorClass = cut(
    lookup(names.errorClass, messageAttributes, sns?.messageAttributes) ?? fromOrigin.errorClass,
    MAX_ERROR_CLASS_CHARS,
  );
  const errorMessage = cut(
    lookup(names.errorMessage, messageAttributes, sns?.messageAttributes) ?? fromOrigin.errorMessage,
    MAX_ERROR_MESSAGE_CHARS,
  );
  const receiveCount = positiveInt(systemAttributes.ApproximateReceiveCount, 0);
  const { classification } = classifyMessage(
    {
      ...(errorClass !== undefined ? { errorClass } : {}),
      ...(errorMessage !== undefined ? { errorMessage } : {}),
      // Known when the message can be sent back: to its source queue, or to its topic, bus or function.
      sourceKnown: origin?.arn != null,
      bodyIsJson: isJson(sns ? (JSON.parse(bodyText) as { Message: string }).Message : bodyText),
      receiveCount,
    },
    ctx.rules ?? DEFAULT_RULES,
  );
  const retention = retentionDeadline({
    fifo: ctx.fifo,
    retentionPeriodSeconds: ctx.retentionPeriodSeconds,
    systemAttributes,
    now: ctx.now,
  });
  const chunked = body.byteLength > INLINE_BODY_MAX_BYTES;
  const seenAt = new Date(ctx.now).toISOString();
  const failure: Envelope['failure'] = { fingerprint: fingerprint(errorClass, errorMessage) };
  if (errorClass !== undefined) failure.errorClass = errorClass;
  if (errorMessage !== undefined) failure.errorMessage = errorMessage;

  const envelope: Envelope = {
    dlqArn: ctx.dlqArn,
    messageId: message.MessageId,
    idempotencyKey: key,
    keySource,
    sourceArn,
    bodyBytes: body.byteLength,
    bodySha256: sha256Hex(body),
    bodyChunked: chunked,
    bodyChunks: chunked ? Math.ceil(body.byteLength / BODY_CHUNK_BYTES) : 0,
    messageAttributes,
    systemAttributes,
    receiveCount,
    sentAt: positiveInt(systemAttributes.SentTimestamp, 0),
    retentionDeadline: retention.deadline,
    retentionDeadlineApproximate: retention.approximate,
    failure,
    classification,
    bodyFormat: sns ? 'sns-notification' : 'raw',
    state: 'IN_DLQ',
    redriveCount: positiveInt(messageAttributes['redrive-count']?.stringValue, 0),
    firstSeenAt: seenAt,
    lastSeenAt: seenAt,
  };
  if (sns)
    envelope.sns = {
      topicArn: sns.topicArn,
      messageId: sns.messageId,
      messageAttributes: sns.messageAttributes,
    };
  if (origin) envelope.origin = origin;
  if (ctx.dlqRedrivePolicy)
    envelope.dlqRedrivePolicy = {
      maxReceiveCount: ctx.dlqRedrivePolicy.maxReceiveCount,
      deadLetterTargetArn: ctx.dlqRedrivePolicy.deadLetterTargetArn,
      receiveCountIncludesPipelinePeeks: true,
    };
  const payload = parsePayloadPointer(bodyText, messageAttributes);
  if (payload) envelope.payload = payload;
  if (ctx.incidentId !== undefined) envelope.incidentId = ctx.incidentId;
  if (ctx.inventory !== undefined) {
    envelope.inventoryId = ctx.inventory.id;
    envelope.inventoryStep = ctx.inventory.step;
  }
  if (ctx.lateArrival) envelope.lateArrival = true;
  return { envelope, body };
}
