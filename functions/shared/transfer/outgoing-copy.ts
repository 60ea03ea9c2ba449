/**
 * The copy of a DLQ message that a transfer sends (pure: no AWS call, so Preflight can use the same
 * rules without bundling the transfer's SQS calls): body string and every original message attribute
 * unchanged, the pipeline's `redrive-count` (incremented), `redrive-id` and `idempotency-key` added;
 * SQS's 10-attribute limit (`no-room`) and the destination's `MaximumMessageSize` counted as SQS
 * counts it (`too-large`); FIFO MessageGroupId kept and MessageDeduplicationId the ledger
 * entry's ({@link deduplicationIdOf}).
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-attributes.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/using-messagededuplicationid-property.html
 */
import type { Message, MessageAttributeValue } from '@aws-sdk/client-sqs';
import { PIPELINE_ATTRIBUTES, setOwn, sha256Hex } from '#inventory/idempotency-key.js';
import type { Envelope } from '#inventory/model.js';
import type { LedgerEntry, LedgerKind } from './redrive-ledger.js';

/** SQS's limit of message attributes per message. */
export const MAX_MESSAGE_ATTRIBUTES = 10;
/** The pipeline attributes every copy gets: `redrive-count`, `redrive-id`, `idempotency-key`. */
const ADDED_ATTRIBUTES = 3;

/** A message to send, already shaped for SendMessage. */
export interface OutgoingMessage {
  body: string;
  attributes: Record<string, MessageAttributeValue>;
  groupId?: string;
  deduplicationId?: string;
}

/** What {@link outgoingOf} needs of a transfer request (see `TransferRequest` in message-transfer.ts). */
export interface OutgoingRequest {
  message: Message;
  key: string;
  incidentId: string;
  kind: LedgerKind;
  /** Where to send; null for a discard. A `.fifo` URL gets MessageGroupId and MessageDeduplicationId. */
  destinationUrl: string | null;
  /** The destination's MaximumMessageSize, bytes; null for a discard. */
  destinationMaxBytes: number | null;
  addPipelineAttributes: boolean;
}

/** Why a copy cannot be sent (the transfer reports it back and leaves the message in the DLQ). */
export type CopyRefusal =
  | { result: 'no-room' }
  | { result: 'too-large'; sizeBytes: number; limitBytes: number };

/**
 * Builds the outgoing copy of a received message: body and attributes unchanged, pipeline
 * attributes added or replaced. Returns undefined when the attributes would exceed 10.
 *
 * @param message - received with `MessageAttributeNames: ['All']` and system attributes.
 */
export function outgoingCopy(
  message: Message,
  opts: { key: string; redriveId: string; fifo: boolean; addPipelineAttributes: boolean },
): OutgoingMessage | undefined {
  const attributes: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    if (opts.addPipelineAttributes && (PIPELINE_ATTRIBUTES as readonly string[]).includes(name)) continue;
    setOwn(attributes, name, {
      DataType: value.DataType as string,
      ...(value.StringValue !== undefined ? { StringValue: value.StringValue } : {}),
      ...(value.BinaryValue !== undefined ? { BinaryValue: value.BinaryValue } : {}),
    });
  }
  if (opts.addPipelineAttributes) {
    const previous = Number(message.MessageAttributes?.['redrive-count']?.StringValue ?? 0);
    const count = Number.isFinite(previous) && previous >= 0 ? Math.trunc(previous) + 1 : 1;
    if (Object.keys(attributes).length + ADDED_ATTRIBUTES > MAX_MESSAGE_ATTRIBUTES) return undefined;
    attributes['redrive-count'] = { DataType: 'Number', StringValue: String(count) };
    attributes['redrive-id'] = { DataType: 'String', StringValue: opts.redriveId };
    attributes['idempotency-key'] = { DataType: 'String', StringValue: opts.key };
  }
  const out: OutgoingMessage = { body: message.Body ?? '', attributes };
  if (opts.fifo) {
    out.groupId = message.Attributes?.MessageGroupId ?? 'redrive';
    out.deduplicationId = fifoDeduplicationId(opts.key);
  }
  return out;
}

/**
 * The size SQS counts against `MaximumMessageSize`: the body's UTF-8 bytes plus, per message
 * attribute, the bytes of its name, its data type and its value (string UTF-8, binary as is).
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-attributes.html
 */
export function outgoingSizeBytes(message: Pick<OutgoingMessage, 'body' | 'attributes'>): number {
  let size = Buffer.byteLength(message.body, 'utf8');
  for (const [name, value] of Object.entries(message.attributes)) {
    size += Buffer.byteLength(name, 'utf8') + Buffer.byteLength(value.DataType ?? '', 'utf8');
    if (value.StringValue !== undefined) size += Buffer.byteLength(value.StringValue, 'utf8');
    if (value.BinaryValue !== undefined) size += value.BinaryValue.byteLength;
  }
  return size;
}

/**
 * The key's MessageDeduplicationId: SHA-256 of the idempotency key, hex (64 chars). A copy is
 * built with it; the transfer replaces it with its ledger entry's ({@link deduplicationIdOf})
 * before the send.
 */
export function fifoDeduplicationId(key: string): string {
  return sha256Hex(`idempotency-key:${key}`);
}

/**
 * The MessageDeduplicationId a FIFO copy of a ledger entry is sent with: the one the entry
 * recorded, or, for an entry written before ids were recorded, the key's (what its first send used).
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/using-messagededuplicationid-property.html
 */
export function deduplicationIdOf(entry: Pick<LedgerEntry, 'key' | 'deduplicationId'>): string {
  return entry.deduplicationId ?? fifoDeduplicationId(entry.key);
}

/**
 * The copy {@link transferMessage} would send, or why it cannot be sent (`no-room`, `too-large`);
 * no copy for a discard. Park asks before it records anything on the envelope. The copy carries
 * `redrive-id` = the incident (the same in every run: a restart's resend carries the same
 * `redrive-id`, so consumers deduplicating content-hash keys per redrive skip it too); a `.fifo`
 * destination gets MessageGroupId and MessageDeduplicationId.
 */
export function outgoingOf(req: OutgoingRequest): { outgoing?: OutgoingMessage; result?: CopyRefusal } {
  if (!req.destinationUrl) return {};
  const outgoing = outgoingCopy(req.message, {
    key: req.key,
    redriveId: req.incidentId,
    fifo: req.destinationUrl.endsWith('.fifo'),
    addPipelineAttributes: req.addPipelineAttributes && req.kind === 'redrive',
  });
  if (!outgoing) return { result: { result: 'no-room' } };
  const sizeBytes = outgoingSizeBytes(outgoing);
  if (req.destinationMaxBytes !== null && sizeBytes > req.destinationMaxBytes)
    return { result: { result: 'too-large', sizeBytes, limitBytes: req.destinationMaxBytes } };
  return { outgoing };
}

/**
 * Why the sample could not copy a stored message to a destination, before anything is received
 * (Preflight): `no-room` when its attributes leave no room for the pipeline's three
 * (SQS allows 10), `too-large` when the copy with them would exceed `destinationMaxBytes`; null
 * when the sample can copy it. The same rules as {@link outgoingOf}, from the envelope's stored
 * attributes and body size (the body itself is not read). `kind` `park`: the copy Park would send
 * to the parking queue (the message's own attributes, none of the pipeline's), so Preflight can
 * refuse before the approval what Park would refuse after parking the others.
 */
export function sampleCopyProblem(
  envelope: Pick<Envelope, 'messageAttributes' | 'bodyBytes' | 'idempotencyKey'>,
  incidentId: string,
  destinationMaxBytes: number,
  kind: 'redrive' | 'park' = 'redrive',
): 'no-room' | 'too-large' | null {
  const attributes: Record<string, MessageAttributeValue> = {};
  for (const [name, a] of Object.entries(envelope.messageAttributes))
    setOwn(attributes, name, {
      DataType: a.dataType,
      ...(a.stringValue !== undefined ? { StringValue: a.stringValue } : {}),
      ...(a.binaryValueBase64 !== undefined
        ? { BinaryValue: Buffer.from(a.binaryValueBase64, 'base64') }
        : {}),
    });
  const { result } = outgoingOf({
    message: { Body: '', MessageAttributes: attributes },
    key: envelope.idempotencyKey,
    incidentId,
    kind,
    destinationUrl: kind,
    destinationMaxBytes: destinationMaxBytes - envelope.bodyBytes,
    // A parked copy carries the message's own attributes only (Park, functions/park/park.ts).
    addPipelineAttributes: kind === 'redrive',
  });
  return result?.result ?? null;
}
