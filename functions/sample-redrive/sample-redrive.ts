/**
 * SampleRedrive: sends a handful of DLQ messages (plan.sampleSize) back to their own source queue
 * one by one, so the verification can see whether the consumer now copes, before anything is
 * bulk-moved.
 *
 * Per message: receive from the DLQ, record the idempotency key in the ledger (conditional write,
 * IN_PROGRESS), send to the message's DeadLetterQueueSourceArn (or `plan.destinationArn`) with the
 * body and attributes unchanged plus `redrive-count` (incremented), `redrive-id` and
 * `idempotency-key`, mark SENT, delete from the DLQ, mark the envelope REDRIVEN. FIFO: the
 * MessageGroupId is kept and the MessageDeduplicationId derives from the key.
 * A copy larger than its destination's MaximumMessageSize (body + attributes + ours) is not
 * sent: it stays in the DLQ for the move task (which moves it unchanged, without our attributes),
 * is reported in `tooLarge`, and another message is sampled in its place.
 *
 * Crash safety (the workflow retries this step on `Lambda.Unknown` / `Sandbox.Timedout`):
 * - crash between send and delete: the ledger says SENT for that DLQ MessageId, so the retry
 *   deletes the DLQ copy without sending and counts `duplicateSendsPrevented`;
 * - crash between record and send: the retry sends again. On FIFO the deduplication id makes that
 *   harmless; on a standard queue the send may have reached SQS before the crash, so the consumer
 *   can get a duplicate, which the consumer-side middleware skips by its `idempotency-key`.
 *   Resending is chosen over not sending because not sending could lose the message;
 * - the crashed message stays invisible for the receive's visibility timeout, so the retry first
 *   waits until its own unfinished ledger entries are visible again (bounded by that timeout)
 *   and the bulk move can never carry a message that was already sent; if such a message is still
 *   held by another receiver after that, the step waits again and then throws `Redrive.Transient`.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_DeleteMessage.html
 */

import { ExecutionPlan, parseSqsArn, runIdOf } from '#incident/execution-plan.js';
import { scanUntilFound, type VisitResult } from '#inventory/dlq-scan.js';
import type { EnvelopeStore } from '#inventory/envelope-store.js';
import { TransientError } from '#platform/errors.js';
import { sleep as realSleep } from '#platform/sleep.js';
import type { QueueInfo, SqsQueues } from '#platform/sqs-queues.js';
import * as z from '#platform/zod.js';
import { type TransferPorts, transferMessage } from '#transfer/message-transfer.js';

/** Input of the SampleRedrive function. Only the preflight fields it uses are required. */
export const SampleRedriveInput = z.object({
  plan: ExecutionPlan,
  preflight: z.looseObject({ verifyWindowSeconds: z.number().check(z.int(), z.gte(0)), fifo: z.boolean() }),
});
export type SampleRedriveInput = z.infer<typeof SampleRedriveInput>;

/** `$.sample` (docs/contracts.md) plus `duplicateSendsPrevented`. */
export interface SampleRedriveResult {
  redriveId: string;
  /** Messages sent by this invocation. */
  sent: number;
  /** Messages of this run sent by an earlier (crashed) attempt. */
  alreadySent: number;
  /** Idempotency keys of every sample message of the run (at most the sample size). */
  keys: string[];
  /** Seconds the workflow waits before VerifySample. */
  verifyAfterSeconds: number;
  duplicateSendsPrevented: number;
  /** Messages that could not be sampled because SQS's 10 attributes leave no room for ours. */
  noRoomForAttributes: number;
  /** Messages whose copy would exceed the destination's MaximumMessageSize: left in the DLQ. */
  tooLarge: number;
  /** The first few of them, with the size SQS would count and the destination's limit, bytes. */
  tooLargeMessages: { messageId: string; sizeBytes: number; limitBytes: number; destinationArn: string }[];
}

/** How many too-large messages `$.sample` names (the count covers all of them). */
const TOO_LARGE_NAMED = 5;

/** Ports of {@link sampleRedrive}. */
export interface SampleRedriveDeps extends TransferPorts {
  queues: Pick<SqsQueues, 'receive' | 'changeVisibility' | 'resolveByName' | 'describe'>;
  envelopes: Pick<EnvelopeStore, 'getEnvelope' | 'setState'>;
  /** Visibility timeout of each receive, seconds; also how long a crashed attempt hides a message. @default 30 */
  visibilityTimeoutSeconds?: number;
  /** Most messages received looking for eligible samples. @default 1000 */
  maxMessages?: number;
  sleep?: (ms: number) => Promise<void>;
}

const DO_NOT_REDRIVE = new Set(['poison', 'permanent', 'systemic']);

/**
 * Redrives the sample.
 * @throws TransientError on throttling/5xx; QueueNotFoundError when a source queue is gone.
 */
export async function sampleRedrive(
  input: SampleRedriveInput,
  deps: SampleRedriveDeps,
): Promise<SampleRedriveResult> {
  const { plan, preflight } = input;
  const redriveId = plan.incidentId;
  const now = deps.now ?? Date.now;
  const sleep = deps.sleep ?? realSleep;
  const vt = deps.visibilityTimeoutSeconds ?? 30;

  const runId = runIdOf(plan);
  // The DLQ's redrive entries, read consistently: this run's sample so far, and every unfinished
  // entry (this run's after a Lambda retry, an earlier run's after a crash and a restart), which
  // must be finished before the bulk move could carry its message a second time.
  const redrives = (await deps.ledger.list(plan.dlqArn)).filter((e) => e.kind === 'redrive');
  const earlier = redrives.filter((e) => e.redriveId === runId);
  const keys = new Set(earlier.map((e) => e.key));
  const unfinished = new Map(redrives.filter((e) => !e.dlqDeleted).map((e) => [e.dlqMessageId, e]));
  const busy = new Set<string>();
  const result: SampleRedriveResult = {
    redriveId,
    sent: 0,
    alreadySent: earlier.filter((e) => e.status === 'SENT' || e.dlqDeleted).length,
    keys: [],
    verifyAfterSeconds: preflight.verifyWindowSeconds,
    duplicateSendsPrevented: 0,
    noRoomForAttributes: 0,
    tooLarge: 0,
    tooLargeMessages: [],
  };
  // A crashed attempt left messages invisible until their visibility timeout ends: wait for them,
  // or the bulk move could later carry a message this run already sent.
  if (unfinished.size > 0) {
    const visibleAt = Math.max(...[...unfinished.values()].map((e) => e.visibleAfter));
    const wait = Math.min(visibleAt - now(), vt * 1000) + 250;
    if (wait > 0) await sleep(wait);
  }

  // An earlier run's unfinished sample message, once taken over, is part of this run's sample.
  const inherited = [...unfinished.values()].filter((e) => e.redriveId !== runId).length;
  let need = plan.sampleSize - earlier.length - inherited;
  const destinations = new Map<string, QueueInfo>();
  const destinationOf = async (arn: string): Promise<QueueInfo> => {
    let info = destinations.get(arn);
    if (!info) {
      const parsed = parseSqsArn(arn);
      info = await deps.queues.resolveByName(parsed?.queueName ?? arn, parsed?.accountId);
      destinations.set(arn, info);
    }
    return info;
  };

  if (need > 0 || unfinished.size > 0) {
    const scan = await scanUntilFound(
      deps.queues,
      {
        queueUrl: plan.dlqUrl,
        visibilityTimeoutSeconds: vt,
        maxMessages: deps.maxMessages ?? 1000,
        // One wait-and-rescan: with the first wait this stays well inside the 120 s Lambda
        // timeout; what is still held after it is Redrive.Transient, which the state retries.
        rescans: 1,
        sleep,
      },
      async (batch) => {
        const results = new Map<string, VisitResult>();
        for (const message of batch) {
          const id = message.MessageId as string;
          results.set(id, 'hold');
          const pending = unfinished.get(id);
          const envelope = await deps.envelopes.getEnvelope(plan.dlqArn, id);
          if (!envelope) continue; // arrived after triage: no classification, not a sample candidate
          const eligible =
            envelope.state === 'IN_DLQ' &&
            !DO_NOT_REDRIVE.has(envelope.classification) &&
            envelope.redriveCount < plan.maxRedrives &&
            // An extended-client pointer to a gone S3 object (Preflight's HeadObject): Park's.
            envelope.payloadGoneAt === undefined &&
            (envelope.sourceArn !== 'unknown' || plan.destinationArn !== null);
          // One copy of a key per run: another DLQ message with the same key is left alone.
          if (!pending && (need <= 0 || !eligible || keys.has(envelope.idempotencyKey))) continue;
          const destinationArn = plan.destinationArn ?? envelope.sourceArn;
          const destination = await destinationOf(destinationArn);
          const outcome = await transferMessage(
            {
              message,
              key: envelope.idempotencyKey,
              incidentId: plan.incidentId,
              redriveId: runId,
              kind: 'redrive',
              dlqArn: plan.dlqArn,
              dlqUrl: plan.dlqUrl,
              destinationUrl: destination.url,
              destinationMaxBytes: destination.maximumMessageSize,
              visibilityTimeoutSeconds: vt,
              addPipelineAttributes: true,
            },
            deps,
          );
          if (outcome.result === 'no-room') {
            result.noRoomForAttributes += 1;
            continue;
          }
          if (outcome.result === 'too-large') {
            result.tooLarge += 1;
            if (result.tooLargeMessages.length < TOO_LARGE_NAMED)
              result.tooLargeMessages.push({
                messageId: id,
                sizeBytes: outcome.sizeBytes,
                limitBytes: outcome.limitBytes,
                destinationArn,
              });
            continue;
          }
          if (outcome.result === 'busy') {
            busy.add(outcome.owner);
            continue;
          }
          results.set(id, 'consumed');
          if (pending) unfinished.delete(id);
          else need -= 1;
          await deps.envelopes.setState(plan.dlqArn, id, 'REDRIVEN', `sample redrive (run ${redriveId})`);
          keys.add(envelope.idempotencyKey);
          if (outcome.result === 'duplicate-prevented') result.duplicateSendsPrevented += 1;
          else result.sent += 1;
        }
        return { results, stop: need <= 0 && unfinished.size === 0 };
      },
      () => unfinished.size,
    );
    // A message of this run still in the DLQ (held by another receiver) would be carried again by
    // the bulk move: a duplicate the ledger never sees. Only a message that is gone may stay unfinished.
    if (busy.size > 0)
      throw new TransientError(
        `sample message(s) are held by another run of the pipeline (${[...busy].join(', ')}) whose lease is not over; retry after it`,
      );
    if (unfinished.size > 0 && (scan.inFlight > 0 || scan.truncated))
      throw new TransientError(
        `${unfinished.size} sample message(s) of run ${redriveId} are still in ${plan.dlqUrl} but were not received (${scan.inFlight} in flight); retry once their visibility timeout ends`,
      );
  }
  result.keys = [...keys].slice(0, plan.sampleSize);
  return result;
}
