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
 * destination's `MaximumMessageSize`: a copy that would exceed it is reported back
 * (`too-large`) and left in the DLQ before anything is recorded, so no retry trips over it again.
 * FIFO: the MessageGroupId is kept and the MessageDeduplicationId is derived from the idempotency key,
 * so a resend within 5 minutes is accepted but not delivered twice.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-metadata.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/using-messagededuplicationid-property.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-attributes.html
 */
import {
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  type Message,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { sqsClient } from '#platform/clients.js';
import { awsErrorName, errorMessage, isRetryable, RedriveError, TransientError } from '#platform/errors.js';
import { adaptSqsError } from '#platform/sqs-queues.js';
import { type CopyRefusal, deduplicationIdOf, type OutgoingMessage, outgoingOf } from './outgoing-copy.js';
import type { BeginOutcome, LedgerEntry, LedgerKind, RedriveLedger } from './redrive-ledger.js';

export {
  type CopyRefusal,
  deduplicationIdOf,
  fifoDeduplicationId,
  MAX_MESSAGE_ATTRIBUTES,
  type OutgoingMessage,
  outgoingCopy,
  outgoingOf,
  outgoingSizeBytes,
  sampleCopyProblem,
} from './outgoing-copy.js';

/** Send and delete, the two SQS calls of a transfer. */
export interface TransferSqs {
  /** @returns the MessageId the destination assigned. */
  send(queueUrl: string, message: OutgoingMessage): Promise<string | null>;
  delete(queueUrl: string, receiptHandle: string): Promise<void>;
  /** DeleteMessageBatch in groups of 10; returns the receipt handles whose delete failed. */
  deleteBatch?(queueUrl: string, receiptHandles: readonly string[]): Promise<Set<string>>;
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

/** The hook installed with {@link setTransferFaultHook}, for the other transfer paths (Park's batches). */
export function transferFaultHook(): TransferFaultHook | undefined {
  return globalFaultHook;
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
  /** No room for the pipeline's attributes (`no-room`), or larger than the destination's MaximumMessageSize (`too-large`): left in the DLQ, nothing recorded. */
  | CopyRefusal;

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
 * True when SQS answered a send with a refusal (4xx other than throttling, or the queue-not-found /
 * access-denied errors this module maps them to): the message was not accepted. Anything else (a
 * 5xx, a timeout, a dropped connection, a crash) may have been accepted.
 */
export function refusedOutright(error: unknown): boolean {
  if (error instanceof RedriveError)
    return error.code === 'QUEUE_NOT_FOUND' || error.code === 'ACCESS_DENIED';
  const status = (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
  const name = awsErrorName(error) ?? '';
  return (
    typeof status === 'number' && status >= 400 && status < 500 && !/Throttl|RequestThrottled/.test(name)
  );
}

/**
 * The copy to send for `req` under the ledger entry `begin` returned: an entry taken over from
 * another run keeps that run's decision (its kind and destination), so its copy is built for them;
 * `checked` is `outgoingOf(req).outgoing`, reused when the entry agrees with the request. A FIFO
 * copy carries the entry's MessageDeduplicationId ({@link deduplicationIdOf}).
 */
export function outgoingOfEntry(
  req: TransferRequest,
  entry: Pick<LedgerEntry, 'kind' | 'destinationUrl' | 'key' | 'deduplicationId'>,
  checked = outgoingOf(req).outgoing,
): OutgoingMessage | undefined {
  const outgoing =
    entry.destinationUrl === req.destinationUrl && entry.kind === req.kind
      ? checked
      : outgoingOf({
          ...req,
          kind: entry.kind,
          destinationUrl: entry.destinationUrl,
          destinationMaxBytes: null,
        }).outgoing;
  return outgoing?.deduplicationId === undefined
    ? outgoing
    : { ...outgoing, deduplicationId: deduplicationIdOf(entry) };
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
  const outgoing = outgoingOfEntry(req, entry, checked.outgoing);
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

/** One message of a {@link transferBatch}: the ledger fields of a {@link TransferRequest} and where it leaves from. */
export interface BatchTransferRequest {
  /** Identifies the message in the results (its MessageId in the queue it is taken from). */
  id: string;
  key: string;
  incidentId: string;
  /** The run (`plan.runId`): the ledger entry's owner. */
  redriveId: string;
  kind: LedgerKind;
  /** The DLQ the envelope belongs to (the ledger's `dlqArn`). */
  dlqArn: string;
  /**
   * The ledger's identity of the message in hand: its DLQ MessageId, or, un-parking, its MessageId
   * in the parking queue (the parked copy is another message than the one Park's entry describes).
   */
  ledgerMessageId: string;
  /** Un-parking: the envelope's DLQ MessageId, recorded in the entry so Reconcile settles that envelope. */
  envelopeMessageId?: string;
  /** Receipt handle in the queue the message is taken from (the DLQ, or the parking queue when un-parking). */
  receiptHandle: string;
  /** What the ledger records as the destination (queue URL, topic, bus or function ARN). */
  destination: string;
  /** Seconds the message stays hidden if this step crashes (the ledger lease). */
  visibilityTimeoutSeconds: number;
}

/** What {@link transferBatch} did with one message. `send-failed`: the target refused it (left where it is). */
export type BatchTransferResult =
  | { id: string; result: 'sent'; sentMessageId: string | null; resent: boolean; deleted: boolean }
  | { id: string; result: 'duplicate-prevented'; deleted: boolean }
  /** Another run owns the message's entry and its lease is not over: left alone. */
  | { id: string; result: 'busy'; owner: string }
  | { id: string; result: 'send-failed'; code: string; message: string };

/** Ports of {@link transferBatch}. */
export interface BatchTransferPorts {
  ledger: RedriveLedger;
  /**
   * Sends the messages the ledger let through; one outcome per request, in order. Each carries
   * its entry's MessageDeduplicationId, for a copy to a FIFO destination.
   */
  send(
    requests: ReadonlyArray<BatchTransferRequest & { deduplicationId: string }>,
  ): Promise<Array<{ ok: true; sentId: string | null } | { ok: false; code: string; message: string }>>;
  /** Deletes from the queue the messages are taken from; returns the receipt handles that failed. */
  deleteBatch(receiptHandles: readonly string[]): Promise<Set<string>>;
  /** @default the hook installed with {@link setTransferFaultHook} */
  faultHook?: TransferFaultHook;
  now?: () => number;
}

/**
 * {@link transferMessage} for up to ten messages at once, with the same ledger decisions (record,
 * send, mark SENT, delete, mark deleted; see `redrive-ledger.ts`), one batched send and one
 * batched delete: what the recording mover uses. Ledger writes of the batch run side by side.
 * A copy the target refused is abandoned in the ledger (nothing was sent: the message is free
 * again). A message whose delete failed stays SENT; the next attempt deletes it without a second send.
 *
 * @throws TransientError on throttling/5xx (the step is safe to retry); anything the fault hook throws.
 */
export async function transferBatch(
  requests: readonly BatchTransferRequest[],
  ports: BatchTransferPorts,
): Promise<BatchTransferResult[]> {
  const hook = ports.faultHook ?? globalFaultHook;
  const now = (ports.now ?? Date.now)();
  const begun = await Promise.all(
    requests.map((r) =>
      ports.ledger.begin(
        {
          key: r.key,
          dlqArn: r.dlqArn,
          dlqMessageId: r.ledgerMessageId,
          ...(r.envelopeMessageId !== undefined ? { envelopeMessageId: r.envelopeMessageId } : {}),
          incidentId: r.incidentId,
          redriveId: r.redriveId,
          kind: r.kind,
          destinationUrl: r.destination,
          visibleAfter: now + r.visibilityTimeoutSeconds * 1000,
        },
        now,
      ),
    ),
  );
  const results = new Map<string, BatchTransferResult>();
  const toSend: BatchTransferRequest[] = [];
  const toDelete: BatchTransferRequest[] = [];
  requests.forEach((r, i) => {
    const b = begun[i];
    if (b?.outcome === 'busy') results.set(r.id, { id: r.id, result: 'busy', owner: b.entry.redriveId });
    else if (b?.outcome === 'already-sent') {
      results.set(r.id, { id: r.id, result: 'duplicate-prevented', deleted: false });
      toDelete.push(r);
    } else toSend.push(r);
  });
  for (const r of toSend) await hook?.('after-record', r.key);
  const entryOf = (r: BatchTransferRequest) => (begun[requests.indexOf(r)] as BeginOutcome).entry;
  const outcomes =
    toSend.length > 0
      ? await ports.send(toSend.map((r) => ({ ...r, deduplicationId: deduplicationIdOf(entryOf(r)) })))
      : [];
  await Promise.all(
    toSend.map(async (r, i) => {
      const outcome = outcomes[i];
      if (!outcome?.ok) {
        // Refused outright (nothing sent): the entry is void and the message free for a later run.
        await ports.ledger.abandon(r.dlqArn, r.ledgerMessageId, r.redriveId);
        results.set(r.id, {
          id: r.id,
          result: 'send-failed',
          code: outcome?.code ?? 'Unknown',
          message: outcome?.message ?? 'no outcome',
        });
        return;
      }
      await ports.ledger.markSent(r.dlqArn, r.ledgerMessageId, r.redriveId, outcome.sentId);
      const b = begun[requests.indexOf(r)];
      results.set(r.id, {
        id: r.id,
        result: 'sent',
        sentMessageId: outcome.sentId,
        resent: b !== undefined && b.outcome !== 'new' && b.entry.resent,
        deleted: false,
      });
      toDelete.push(r);
    }),
  );
  for (const r of toDelete) await hook?.('after-send', r.key);
  const failed =
    toDelete.length > 0 ? await ports.deleteBatch(toDelete.map((r) => r.receiptHandle)) : new Set<string>();
  await Promise.all(
    toDelete
      .filter((r) => !failed.has(r.receiptHandle))
      .map(async (r) => {
        const result = results.get(r.id);
        if (result && (result.result === 'sent' || result.result === 'duplicate-prevented'))
          result.deleted = true;
        await ports.ledger.markDeleted(
          r.dlqArn,
          r.ledgerMessageId,
          r.redriveId,
          result?.result === 'duplicate-prevented',
        );
      }),
  );
  for (const r of toDelete) await hook?.('after-delete', r.key);
  return requests.map((r) => results.get(r.id) as BatchTransferResult);
}

/**
 * The SQS side of a transfer.
 * @param options.client - @default the shared SQS client
 */
export function createTransferSqs(
  options: { client?: SQSClient } = {},
): TransferSqs & Required<Pick<TransferSqs, 'deleteBatch'>> {
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
    async deleteBatch(queueUrl, receiptHandles) {
      const failed = new Set<string>();
      for (let i = 0; i < receiptHandles.length; i += 10) {
        const group = receiptHandles.slice(i, i + 10);
        const out = await call('sqs:DeleteMessageBatch', queueUrl, () =>
          client().send(
            new DeleteMessageBatchCommand({
              QueueUrl: queueUrl,
              Entries: group.map((handle, j) => ({ Id: String(j), ReceiptHandle: handle })),
            }),
          ),
        );
        for (const f of out.Failed ?? []) failed.add(group[Number(f.Id)] as string);
      }
      return failed;
    },
  };
}
