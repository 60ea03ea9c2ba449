/**
 * Moving one DLQ message somewhere by hand (sample redrive, parking, discarding) in the only safe
 * order: record in the ledger, send, mark SENT, delete from the DLQ, mark deleted. A crash between
 * any two steps leaves state that a retry completes without sending twice (see
 * `redrive-ledger.ts` for the decision table).
 *
 * The outgoing message keeps the body string exactly as received and every original message
 * attribute (DataType and value bytes unchanged), and adds the pipeline's `redrive-count`
 * (incremented), `redrive-id` and `idempotency-key`. SQS allows at most 10 message attributes per
 * message, so a message that has no room for them is reported back (`no-room`) and left in the DLQ.
 * SQS also counts the body and every attribute's name, data type and value against the
 * destination's `MaximumMessageSize` (N01): a copy that would exceed it is reported back
 * (`too-large`) and left in the DLQ before anything is recorded, so no retry trips over it again.
 * FIFO: the MessageGroupId is kept and the MessageDeduplicationId is derived from the idempotency key,
 * so a resend within 5 minutes is accepted but not delivered twice (case C08).
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-metadata.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/using-messagededuplicationid-property.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-attributes.html
 */
import {
  DeleteMessageCommand,
  type Message,
  type MessageAttributeValue,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { PIPELINE_ATTRIBUTES, setOwn, sha256Hex } from '#inventory/idempotency-key.js';
import { sqsClient } from '#platform/clients.js';
import { awsErrorName, errorMessage, isRetryable, RedriveError, TransientError } from '#platform/errors.js';
import { adaptSqsError } from '#platform/sqs-queues.js';
import type { LedgerKind, RedriveLedger } from './redrive-ledger.js';

/** SQS's limit of message attributes per message. */
export const MAX_MESSAGE_ATTRIBUTES = 10;

/** A message to send, already shaped for SendMessage. */
export interface OutgoingMessage {
  body: string;
  attributes: Record<string, MessageAttributeValue>;
  groupId?: string;
  deduplicationId?: string;
}

/** Send and delete, the two SQS calls of a transfer. */
export interface TransferSqs {
  /** @returns the MessageId the destination assigned. */
  send(queueUrl: string, message: OutgoingMessage): Promise<string | null>;
  delete(queueUrl: string, receiptHandle: string): Promise<void>;
}

/**
 * Points where a test can simulate a crash (throw) between the steps. Production code never sets
 * them; see {@link setTransferFaultHook}.
 */
export type TransferStep = 'after-record' | 'after-send' | 'after-delete';
export type TransferFaultHook = (step: TransferStep, key: string) => void | Promise<void>;

let globalFaultHook: TransferFaultHook | undefined;

/**
 * Installs a process-wide fault hook (tests and the local workflow runner only), so a test that
 * drives the real handler can crash it between send and delete. Pass undefined to remove it.
 */
export function setTransferFaultHook(hook: TransferFaultHook | undefined): void {
  globalFaultHook = hook;
}

/** Ports of {@link transferMessage}. */
export interface TransferPorts {
  sqs: TransferSqs;
  ledger: RedriveLedger;
  /** @default the hook installed with {@link setTransferFaultHook} */
  faultHook?: TransferFaultHook;
  now?: () => number;
}

/** What one transfer did. `kind`: what the ledger entry says was done (a takeover keeps the earlier decision). */
export type TransferResult =
  | { result: 'sent'; kind: LedgerKind; sentMessageId: string | null; resent: boolean; takenOver: boolean }
  /** The ledger said SENT for this very DLQ message: deleted without sending again. */
  | { result: 'duplicate-prevented'; kind: LedgerKind; takenOver: boolean }
  /** Another run owns the message's entry and its lease is not over: left alone. */
  | { result: 'busy'; owner: string }
  /** No room for the pipeline's attributes (SQS allows 10): left in the DLQ. */
  | { result: 'no-room' }
  /** The copy is larger than the destination's MaximumMessageSize: left in the DLQ, nothing recorded. */
  | { result: 'too-large'; sizeBytes: number; limitBytes: number };

/** Parameters of one {@link transferMessage}. */
export interface TransferRequest {
  message: Message;
  key: string;
  incidentId: string;
  /** The run (`plan.runId`): the ledger entry's owner. */
  redriveId: string;
  kind: LedgerKind;
  dlqArn: string;
  dlqUrl: string;
  /** Where to send; null for a discard (delete only). A `.fifo` URL gets MessageGroupId and MessageDeduplicationId. */
  destinationUrl: string | null;
  /** The destination's MaximumMessageSize (`QueueInfo.maximumMessageSize`), bytes; null for a discard. */
  destinationMaxBytes: number | null;
  /** The visibility timeout the message was received with, seconds (the ledger lease). */
  visibilityTimeoutSeconds: number;
  /** Add the pipeline attributes (`redrive-count`, `redrive-id`, `idempotency-key`). */
  addPipelineAttributes: boolean;
}

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
    if (Object.keys(attributes).length + PIPELINE_ATTRIBUTES.length > MAX_MESSAGE_ATTRIBUTES)
      return undefined;
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

/** The MessageDeduplicationId of a FIFO redrive: SHA-256 of the idempotency key, hex (64 chars). */
export function fifoDeduplicationId(key: string): string {
  return sha256Hex(`idempotency-key:${key}`);
}

/**
 * The copy {@link transferMessage} would send, or why it cannot be sent (`no-room`, `too-large`);
 * no copy for a discard. Park asks before it records anything on the envelope. The copy carries
 * `redrive-id` = the incident (the same in every run: a restart's resend carries the same
 * `redrive-id`, so consumers deduplicating content-hash keys per redrive skip it too); a `.fifo`
 * destination gets MessageGroupId and MessageDeduplicationId.
 */
export function outgoingOf(
  req: Pick<
    TransferRequest,
    | 'message'
    | 'key'
    | 'incidentId'
    | 'kind'
    | 'destinationUrl'
    | 'destinationMaxBytes'
    | 'addPipelineAttributes'
  >,
): { outgoing?: OutgoingMessage; result?: Extract<TransferResult, { result: 'no-room' | 'too-large' }> } {
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
 * True when SQS answered a send with a refusal (4xx other than throttling, or the queue-not-found /
 * access-denied errors this module maps them to): the message was not accepted. Anything else (a
 * 5xx, a timeout, a dropped connection, a crash) may have been accepted.
 */
function refusedOutright(error: unknown): boolean {
  if (error instanceof RedriveError)
    return error.code === 'QUEUE_NOT_FOUND' || error.code === 'ACCESS_DENIED';
  const status = (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
  const name = awsErrorName(error) ?? '';
  return (
    typeof status === 'number' && status >= 400 && status < 500 && !/Throttl|RequestThrottled/.test(name)
  );
}

/**
 * Takes one received DLQ message through record -> send -> mark SENT -> delete -> mark deleted.
 * Envelope state is the caller's: park records PARKED before calling, the sample marks REDRIVEN after.
 * An entry taken over from another run keeps its kind and destination (its decision stands).
 *
 * @throws TransientError on throttling/5xx (the step is safe to retry); anything the fault hook throws.
 */
export async function transferMessage(req: TransferRequest, ports: TransferPorts): Promise<TransferResult> {
  const hook = ports.faultHook ?? globalFaultHook;
  const now = ports.now ?? Date.now;
  const messageId = req.message.MessageId as string;
  const receipt = req.message.ReceiptHandle as string;
  const checked = outgoingOf(req);
  if (checked.result) return checked.result;
  const begun = await ports.ledger.begin(
    {
      key: req.key,
      dlqArn: req.dlqArn,
      dlqMessageId: messageId,
      incidentId: req.incidentId,
      redriveId: req.redriveId,
      kind: req.kind,
      destinationUrl: req.destinationUrl,
      visibleAfter: now() + req.visibilityTimeoutSeconds * 1000,
    },
    now(),
  );
  if (begun.outcome === 'busy') return { result: 'busy', owner: begun.entry.redriveId };
  const { entry } = begun;
  const takenOver = begun.outcome !== 'new' && begun.takenOver;
  if (begun.outcome === 'already-sent') {
    await ports.sqs.delete(req.dlqUrl, receipt);
    await ports.ledger.markDeleted(req.dlqArn, messageId, req.redriveId, true);
    return { result: 'duplicate-prevented', kind: entry.kind, takenOver };
  }
  await hook?.('after-record', req.key);
  let sentMessageId: string | null = null;
  // A taken-over entry keeps the earlier run's decision: its kind and destination.
  const outgoing =
    entry.destinationUrl === req.destinationUrl && entry.kind === req.kind
      ? checked.outgoing
      : outgoingOf({
          ...req,
          kind: entry.kind,
          destinationUrl: entry.destinationUrl,
          destinationMaxBytes: null,
        }).outgoing;
  if (entry.destinationUrl && outgoing) {
    try {
      sentMessageId = await ports.sqs.send(entry.destinationUrl, outgoing);
    } catch (error) {
      // SQS refused the send outright (queue gone, access denied, message rejected): nothing was
      // sent, so the entry is void and the message free for a later run. A transient failure may
      // have been accepted: the entry stays and the retry resends.
      if (refusedOutright(error)) await ports.ledger.abandon(req.dlqArn, messageId, req.redriveId);
      throw error;
    }
  }
  await ports.ledger.markSent(req.dlqArn, messageId, req.redriveId, sentMessageId);
  await hook?.('after-send', req.key);
  await ports.sqs.delete(req.dlqUrl, receipt);
  await ports.ledger.markDeleted(req.dlqArn, messageId, req.redriveId);
  await hook?.('after-delete', req.key);
  return { result: 'sent', kind: entry.kind, sentMessageId, resent: entry.resent, takenOver };
}

/**
 * The SQS side of a transfer.
 * @param options.client - @default the shared SQS client
 */
export function createTransferSqs(options: { client?: SQSClient } = {}): TransferSqs {
  const client = () => options.client ?? sqsClient();
  const call = async <T>(action: string, url: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (error) {
      const adapted = adaptSqsError(error, action, url);
      if (adapted === error && isRetryable(error))
        throw new TransientError(`${action}: ${errorMessage(error)}`, error);
      throw adapted;
    }
  };
  return {
    async send(queueUrl, message) {
      const out = await call('sqs:SendMessage', queueUrl, () =>
        client().send(
          new SendMessageCommand({
            QueueUrl: queueUrl,
            MessageBody: message.body,
            ...(Object.keys(message.attributes).length > 0 ? { MessageAttributes: message.attributes } : {}),
            ...(message.groupId ? { MessageGroupId: message.groupId } : {}),
            ...(message.deduplicationId ? { MessageDeduplicationId: message.deduplicationId } : {}),
          }),
        ),
      );
      return out.MessageId ?? null;
    },
    async delete(queueUrl, receiptHandle) {
      await call('sqs:DeleteMessage', queueUrl, () =>
        client().send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: receiptHandle })),
      );
    },
  };
}
