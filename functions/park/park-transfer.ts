/**
 * Park's transfer of up to ten DLQ messages at once, in the only safe order and with the ledger's
 * decisions of `transferMessage` (message-transfer.ts, one message at a time):
 *
 * 1. record: the ledger entries (`LedgerBatch.begin`: a message already recorded is not sent again:
 *    this run's SENT entry is deleted without a send, another run's live entry is left alone);
 * 2. send: SendMessageBatch to the parking queue (a discard sends nothing);
 * 3. mark SENT (batched);
 * 4. delete: DeleteMessageBatch from the DLQ;
 * 5. mark deleted (batched).
 *
 * A crash between any two calls leaves what a retry (or a console restart) finishes: an entry
 * IN_PROGRESS is sent again (`resent`: at most a duplicate in the parking queue, harmless by its
 * idempotency key), an entry SENT is deleted without a second send, and an entry deleted whose
 * envelope is still IN_DLQ gets its state from Park's repair. Never a loss: nothing is deleted from
 * the DLQ before its entry says SENT.
 *
 * Per-entry failures (SQS answers a batch call with `Failed` entries):
 * - a send that failed was not enqueued: the message stays in the DLQ, and its entry is removed
 *   when this attempt created it (`abandon`: no entry, no copy), or stays IN_PROGRESS, marked
 *   `resent`, when a crashed attempt may have sent it already (the entry says a copy may exist);
 * - a delete that failed leaves the entry SENT without `dlqDeleted`: the message stays in the DLQ
 *   and the next attempt deletes it without sending again.
 * Either way the message is reported back, not lost, and Park does not end as if it were parked.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessageBatch.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_DeleteMessageBatch.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchExecuteStatement.html
 */
import {
  SendMessageBatchCommand,
  type SendMessageBatchCommandOutput,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { sqsClient } from '#platform/clients.js';
import { errorMessage, isRetryable, TransientError } from '#platform/errors.js';
import { adaptSqsError } from '#platform/sqs-queues.js';
import {
  type OutgoingMessage,
  outgoingOfEntry,
  outgoingSizeBytes,
  refusedOutright,
  type TransferFaultHook,
  type TransferRequest,
  transferFaultHook,
} from '#transfer/message-transfer.js';
import type { BeginOutcome, LedgerKind, RedriveLedger } from '#transfer/redrive-ledger.js';
import type { DeletedMark, LedgerBatch, SentMark } from './ledger-batch.js';

/** Messages per SendMessageBatch / DeleteMessageBatch (the API's limit). */
export const PARK_BATCH = 10;

/**
 * Most payload bytes per SendMessageBatch: SQS limits the sum of the batch's messages (body and
 * attributes) to the maximum message size; 256 KiB holds whatever that quota is now. A message
 * larger than this on its own goes in a batch of one.
 */
const SEND_BATCH_BYTES = 262_144;

/** The code of an entry SendMessageBatch reported neither as sent nor as failed (maybe enqueued). */
const NO_RESULT = 'NotReported';
const NOT_REPORTED: BatchSendOutcome = {
  ok: false,
  code: NO_RESULT,
  message: 'SQS reported the entry neither as sent nor as failed',
  senderFault: false,
};

/** One outcome of a SendMessageBatch entry. `senderFault`: SQS says the request was wrong (a retry fails again). */
export type BatchSendOutcome =
  | { ok: true; sentId: string | null }
  | { ok: false; code: string; message: string; senderFault: boolean };

/** The SQS calls of Park's batches. */
export interface ParkSqs {
  /** SendMessageBatch of `messages` (at most 10): one outcome each, in order. */
  sendBatch(queueUrl: string, messages: readonly OutgoingMessage[]): Promise<BatchSendOutcome[]>;
  /** DeleteMessageBatch in groups of 10; returns the receipt handles whose delete failed. */
  deleteBatch(queueUrl: string, receiptHandles: readonly string[]): Promise<Set<string>>;
}

/** Ports of {@link parkBatch}. */
export interface ParkTransferPorts {
  sqs: ParkSqs;
  ledgerBatch: LedgerBatch;
  /** The per-message ledger: removes the entry of a send SQS refused. */
  ledger: Pick<RedriveLedger, 'abandon'>;
  /** @default the hook installed with `setTransferFaultHook` */
  faultHook?: TransferFaultHook;
  now?: () => number;
}

/** One message of a {@link parkBatch}: a transfer request and when it was received (its lease starts then). */
export interface ParkTransferRequest extends TransferRequest {
  /** Epoch milliseconds of the receive that brought the message. */
  receivedAt: number;
}

/** What {@link parkBatch} did with one message. `kind`: what its ledger entry says (a takeover keeps the earlier decision). */
export type ParkTransferResult =
  /** Sent (or, a discard, decided) and, when `deleted`, gone from the DLQ. */
  | { result: 'sent'; kind: LedgerKind; resent: boolean; deleted: boolean }
  /** The ledger said SENT for this very DLQ message: deleted (when `deleted`) without sending again. */
  | { result: 'duplicate-prevented'; kind: LedgerKind; deleted: boolean }
  /** Another run owns the message's entry and its lease is not over: left alone. */
  | { result: 'busy'; owner: string }
  /** SQS did not enqueue the copy: the message stays in the DLQ. */
  | { result: 'send-failed'; code: string; message: string; senderFault: boolean }
  /** Sent, but another run took the entry over before it said SENT: left in the DLQ for that run. */
  | { result: 'taken-over'; kind: LedgerKind };

/**
 * Takes up to {@link PARK_BATCH} received DLQ messages (distinct MessageIds, one DLQ) through
 * record -> send -> mark SENT -> delete -> mark deleted (see the module comment).
 *
 * @returns one result per request, in order.
 * @throws TransientError on throttling/5xx of a whole call (the step is safe to retry); the
 *   adapted SQS error (queue not found, access denied) when SQS refused a whole SendMessageBatch,
 *   after the entries this attempt created are removed; anything the fault hook throws.
 */
export async function parkBatch(
  requests: readonly ParkTransferRequest[],
  ports: ParkTransferPorts,
): Promise<ParkTransferResult[]> {
  const hook = ports.faultHook ?? transferFaultHook();
  const now = ports.now ?? Date.now;
  const begun = await ports.ledgerBatch.begin(
    requests.map((r) => ({
      key: r.key,
      dlqArn: r.dlqArn,
      dlqMessageId: r.message.MessageId as string,
      incidentId: r.incidentId,
      redriveId: r.redriveId,
      kind: r.kind,
      destinationUrl: r.destinationUrl,
      visibleAfter: r.receivedAt + r.visibilityTimeoutSeconds * 1000,
    })),
    now(),
  );
  const results: Array<ParkTransferResult | undefined> = requests.map(() => undefined);
  const toSend: number[] = [];
  const toDelete: number[] = [];
  begun.forEach((b: BeginOutcome, i) => {
    if (b.outcome === 'busy') results[i] = { result: 'busy', owner: b.entry.redriveId };
    else if (b.outcome === 'already-sent') {
      results[i] = { result: 'duplicate-prevented', kind: b.entry.kind, deleted: false };
      toDelete.push(i);
    } else toSend.push(i);
  });
  for (const i of toSend) await hook?.('after-record', requests[i]?.key as string);

  // The copies, grouped by destination (a taken-over entry keeps the earlier run's decision).
  const sends = new Map<string, Array<{ i: number; outgoing: OutgoingMessage }>>();
  const sentIds = new Map<number, string | null>();
  for (const i of toSend) {
    const req = requests[i] as ParkTransferRequest;
    const { entry } = begun[i] as Exclude<BeginOutcome, { outcome: 'busy' }>;
    const outgoing = outgoingOfEntry(req, entry);
    if (!entry.destinationUrl || !outgoing) sentIds.set(i, null);
    else sends.set(entry.destinationUrl, [...(sends.get(entry.destinationUrl) ?? []), { i, outgoing }]);
  }
  // Entries this attempt created: a send SQS refused leaves nothing, so they are removed.
  const abandon = (indexes: readonly number[]) =>
    Promise.all(
      indexes
        .filter((i) => begun[i]?.outcome === 'new')
        .map((i) => {
          const r = requests[i] as ParkTransferRequest;
          return ports.ledger.abandon(r.dlqArn, r.message.MessageId as string, r.redriveId);
        }),
    );
  for (const [url, copies] of sends) {
    for (const group of bySize(copies)) {
      let outcomes: BatchSendOutcome[];
      try {
        outcomes = await ports.sqs.sendBatch(
          url,
          group.map((c) => c.outgoing),
        );
      } catch (error) {
        // Refused outright (queue gone, access denied): nothing of the batch was sent. Anything
        // else may have been accepted: the entries stay and the retry resends.
        if (refusedOutright(error)) await abandon(group.map((c) => c.i));
        throw error;
      }
      const failed: number[] = [];
      group.forEach(({ i }, j) => {
        const outcome = outcomes[j] ?? NOT_REPORTED;
        if (outcome.ok) sentIds.set(i, outcome.sentId);
        else {
          failed.push(i);
          results[i] = {
            result: 'send-failed',
            code: outcome.code,
            message: outcome.message,
            senderFault: outcome.senderFault,
          };
        }
      });
      // An entry SQS reported neither way may have been enqueued: its entry stays.
      await abandon(failed.filter((i) => (results[i] as { code?: string }).code !== NO_RESULT));
    }
  }

  const sentMarks: SentMark[] = [...sentIds].map(([i, sentMessageId]) => {
    const r = requests[i] as ParkTransferRequest;
    return {
      dlqArn: r.dlqArn,
      dlqMessageId: r.message.MessageId as string,
      redriveId: r.redriveId,
      sentMessageId,
    };
  });
  const takenOver = await ports.ledgerBatch.markSent(sentMarks);
  for (const i of sentIds.keys()) {
    const r = requests[i] as ParkTransferRequest;
    const b = begun[i] as Exclude<BeginOutcome, { outcome: 'busy' }>;
    if (takenOver.has(r.message.MessageId as string))
      results[i] = { result: 'taken-over', kind: b.entry.kind };
    else {
      results[i] = { result: 'sent', kind: b.entry.kind, resent: b.entry.resent, deleted: false };
      toDelete.push(i);
    }
  }
  toDelete.sort((a, b) => a - b);
  for (const i of toDelete) await hook?.('after-send', requests[i]?.key as string);

  const dlqUrl = requests[0]?.dlqUrl as string;
  const failedDeletes =
    toDelete.length > 0
      ? await ports.sqs.deleteBatch(
          dlqUrl,
          toDelete.map((i) => requests[i]?.message.ReceiptHandle as string),
        )
      : new Set<string>();
  const deletedMarks: DeletedMark[] = [];
  for (const i of toDelete) {
    const r = requests[i] as ParkTransferRequest;
    const result = results[i];
    if (failedDeletes.has(r.message.ReceiptHandle as string)) continue;
    if (result?.result === 'sent' || result?.result === 'duplicate-prevented') result.deleted = true;
    deletedMarks.push({
      dlqArn: r.dlqArn,
      dlqMessageId: r.message.MessageId as string,
      redriveId: r.redriveId,
      duplicatePrevented: result?.result === 'duplicate-prevented',
    });
  }
  await ports.ledgerBatch.markDeleted(deletedMarks);
  for (const i of toDelete) await hook?.('after-delete', requests[i]?.key as string);
  return results as ParkTransferResult[];
}

/** Groups of at most {@link PARK_BATCH} copies and {@link SEND_BATCH_BYTES} bytes (one copy at least). */
function bySize<T extends { outgoing: OutgoingMessage }>(copies: readonly T[]): T[][] {
  const groups: T[][] = [];
  let bytes = 0;
  for (const copy of copies) {
    const size = outgoingSizeBytes(copy.outgoing);
    const last = groups.at(-1);
    if (last && last.length < PARK_BATCH && bytes + size <= SEND_BATCH_BYTES) {
      last.push(copy);
      bytes += size;
    } else {
      groups.push([copy]);
      bytes = size;
    }
  }
  return groups;
}

/**
 * The SQS side of Park's batches: SendMessageBatch here, DeleteMessageBatch from the transfer
 * ports (`createTransferSqs().deleteBatch`).
 * @param options.client - @default the shared SQS client
 */
export function createParkSendBatch(options: { client?: SQSClient } = {}): ParkSqs['sendBatch'] {
  return async (queueUrl, messages) => {
    let out: SendMessageBatchCommandOutput;
    try {
      out = await (options.client ?? sqsClient()).send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: messages.map((m, j) => ({
            Id: String(j),
            MessageBody: m.body,
            ...(Object.keys(m.attributes).length > 0 ? { MessageAttributes: m.attributes } : {}),
            ...(m.groupId ? { MessageGroupId: m.groupId } : {}),
            ...(m.deduplicationId ? { MessageDeduplicationId: m.deduplicationId } : {}),
          })),
        }),
      );
    } catch (error) {
      const adapted = adaptSqsError(error, 'sqs:SendMessageBatch', queueUrl);
      if (adapted === error && isRetryable(error))
        throw new TransientError(`sqs:SendMessageBatch: ${errorMessage(error)}`, error);
      throw adapted;
    }
    const outcomes: BatchSendOutcome[] = messages.map(() => NOT_REPORTED);
    for (const s of out.Successful ?? []) outcomes[Number(s.Id)] = { ok: true, sentId: s.MessageId ?? null };
    for (const f of out.Failed ?? [])
      outcomes[Number(f.Id)] = {
        ok: false,
        code: f.Code ?? 'Unknown',
        message: f.Message ?? '',
        senderFault: f.SenderFault === true,
      };
    return outcomes;
  };
}
