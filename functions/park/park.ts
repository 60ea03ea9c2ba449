/**
 * Park: takes every message that must not be bulk-redriven out of the DLQ before the move task
 * runs, because a move task cannot skip or filter messages.
 *
 * A message is parked when its envelope is classified `poison` or `permanent`, when it has been
 * redriven `plan.maxRedrives` times already (its redrive history: REDRIVEN envelopes of its
 * idempotency key across incidents, move-task moves included, `redrive-history.ts`;
 * or its `redrive-count` attribute), or when it has no DeadLetterQueueSourceArn and no
 * destination is given (a move task could not return it: `CouldNotDetermineMessageSource`).
 * With `plan.discardPoison` such messages are deleted instead, as a recorded decision.
 *
 * The messages to park are gathered as the scan finds them (1 in 20 of a DLQ, say, so a receive
 * of 10 brings one at most, mostly none) and moved {@link PARK_BATCH} at a time (`park-transfer.ts`):
 * ledger entries, SendMessageBatch to the parking queue, SENT, DeleteMessageBatch from the DLQ,
 * deleted; what is gathered when a scan ends is moved then. All the gathered messages are held by
 * the scan's receives, whose visibility timeout covers the scan. Then the envelope state (PARKED /
 * DISCARDED, with the reason), written in bulk (25 PartiQL UPDATEs a call, a flush every
 * {@link STATE_FLUSH} messages and at the end), so a state is always backed by the ledger. A crash anywhere leaves state the retry (or a restart) completes: the ledger entry
 * names the DLQ MessageId (stable while the message stays in the DLQ), so a retry deletes an
 * already-sent copy instead of sending it again, and sets the state of an envelope the crash left
 * IN_DLQ although its ledger entry says the message is gone (so does Reconcile). Messages are
 * received 10 at a time within a budget; the ones not to be parked are released (visibility 0) at
 * the end.
 * A do-not-redrive message must not be left for the move task: a target still unseen while the
 * DLQ reports messages in flight (a crashed attempt's receive, a console poll) is waited for (one
 * visibility timeout, twice), then `Redrive.Transient`; one beyond the receive budget is
 * `Redrive.Refused`. Only a target that is gone (nothing in flight) counts as `skipped`.
 * A target larger than the parking queue's MaximumMessageSize (body + attributes) cannot be
 * parked: its envelope is left as it is, the others are parked, and then the run is refused
 * naming it (the move task would carry it back to its source).
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-configure-dead-letter-queue-redrive.html
 */

import { ExecutionPlan, runIdOf } from '#incident/execution-plan.js';
import { scanUntilFound, type VisitResult } from '#inventory/dlq-scan.js';
import {
  CANDIDATE_FIELDS,
  type EnvelopeCandidate,
  type EnvelopeListing,
} from '#inventory/envelope-listing.js';
import type { EnvelopeStates, StateChange } from '#inventory/envelope-states.js';
import type { EnvelopeStore, StoredEnvelope } from '#inventory/envelope-store.js';
import { DEFAULT_HOLD_LIMIT } from '#inventory/inventory-session.js';
import { RedriveRefusedError, TransientError } from '#platform/errors.js';
import { sleep } from '#platform/sleep.js';
import { queueDepth, type SqsQueues } from '#platform/sqs-queues.js';
import * as z from '#platform/zod.js';
import { outgoingOf } from '#transfer/message-transfer.js';
import type { RedriveLedger } from '#transfer/redrive-ledger.js';
import { parkReason } from '#transfer/redrive-plan.js';
import {
  PARK_BATCH,
  type ParkTransferPorts,
  type ParkTransferRequest,
  type ParkTransferResult,
  parkBatch,
} from './park-transfer.js';
import { createRedriveHistory } from './redrive-history.js';

/** Input of the Park function. */
export const ParkInput = z.object({ plan: ExecutionPlan });
export type ParkInput = z.infer<typeof ParkInput>;

/** `$.park`. `skipped`: messages to park that were not found or not handled in this run. */
export interface ParkResult {
  parked: number;
  discarded: number;
  skipped: number;
  duplicateSendsPrevented: number;
}

/** Ports of {@link park}. */
export interface ParkDeps extends ParkTransferPorts {
  /** The ledger: the batches' rare paths, and the entries a retry reads first. */
  ledger: ParkTransferPorts['ledger'] & Pick<RedriveLedger, 'list'>;
  queues: Pick<SqsQueues, 'receive' | 'changeVisibility' | 'describe'>;
  envelopes: Pick<EnvelopeStore, 'listEnvelopes'>;
  /**
   * The envelope listing with projections (envelope-listing.ts): only {@link CANDIDATE_FIELDS}
   * come back. The handler always passes it. @default `envelopes.listEnvelopes` (full envelopes)
   */
  listing?: EnvelopeListing;
  /** The PARKED / DISCARDED states, written in bulk. */
  envelopeStates: Pick<EnvelopeStates, 'setStates'>;
  /** Visibility timeout of each receive, seconds, raised where the DLQ's depth needs longer ({@link parkVisibilityTimeoutSeconds}). @default {@link parkVisibilityTimeoutSeconds} of the DLQ's depth */
  visibilityTimeoutSeconds?: number;
  /** Most messages received in one invocation. @default {@link PARK_MAX_MESSAGES} */
  maxMessages?: number;
  sleep?: (ms: number) => Promise<void>;
}

/** What Park keeps of an envelope it may park (no body). */
type ParkCandidate = Pick<
  EnvelopeCandidate,
  | 'messageId'
  | 'idempotencyKey'
  | 'state'
  | 'stateReason'
  | 'classification'
  | 'redriveCount'
  | 'sourceArn'
  | 'origin'
  | 'payload'
  | 'payloadGoneAt'
>;

const STATE_OF_KIND = { redrive: 'REDRIVEN', park: 'PARKED', discard: 'DISCARDED' } as const;

/**
 * Most messages Park receives in one invocation: the inventory's hold limit, so Park reaches every
 * message an inventory can have seen. Do-not-redrive messages are spread through the DLQ (in a
 * 100,000-message incident, 5,000 poison among the rest), and Park holds everything else it
 * receives until its scan ends, below SQS's ~120,000 in-flight limit.
 */
export const PARK_MAX_MESSAGES = DEFAULT_HOLD_LIMIT;

/** The slowest scan Park plans for, messages per second (receives of 10, a record-send-delete of ~8 calls for 1 in 20). */
const PARK_SCAN_RATE_FLOOR = 125;

/** Park's Lambda timeout, seconds (packages/cdk/src/function-catalog.ts `park.timeoutSeconds`). */
export const PARK_TIMEOUT_SECONDS = 900;

/**
 * The visibility timeout of Park's receives for a DLQ of `depth` messages, seconds: what Park holds
 * must stay hidden for its whole scan, or the scan receives it again and never gets past it; 30 s
 * up to 3,750 messages, then the scan's time at {@link PARK_SCAN_RATE_FLOOR}, at most the
 * function's timeout (longer would hide messages beyond any run of Park).
 *
 * A configured timeout (`REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS`, short in tests so a
 * crashed attempt's messages come back soon) is kept where it covers the scan at that rate and
 * raised to the scan's time where it does not: with 5 s on a 100,000-message DLQ the messages Park
 * held came back within seconds, the scan received them again and again, and Park refused after
 * 110,000 receives having reached 216 of its 5,000 targets.
 *
 * @param depth - the DLQ's depth (visible + in flight + delayed), messages.
 * @param configured - the configured visibility timeout, seconds, when one is set.
 */
export function parkVisibilityTimeoutSeconds(depth: number, configured?: number): number {
  const scanSeconds = Number.isFinite(depth) ? Math.ceil(depth / PARK_SCAN_RATE_FLOOR) : 0;
  return Math.min(PARK_TIMEOUT_SECONDS, Math.max(configured ?? 30, scanSeconds));
}

/** Envelope states Park writes per flush: one BatchExecuteStatement of 25. */
const STATE_FLUSH = 25;

/** The ` (run <id>)` suffix Park puts on an envelope's stateReason (the id is the incident's). */
const RUN_SUFFIX = / \(run [^)]*\)$/;

/** The ledger key of a park/discard: per DLQ message, so duplicates with one idempotency key are each parked. */
export function parkLedgerKey(envelope: Pick<StoredEnvelope, 'idempotencyKey' | 'messageId'>): string {
  return `${envelope.idempotencyKey}@${envelope.messageId}`;
}

/**
 * Parks (or discards) the do-not-redrive messages of the plan's DLQ.
 *
 * @throws RedriveRefusedError when messages must be parked but there is no parking queue and
 *   `discardPoison` is false (nothing is moved).
 * @throws TransientError on throttling/5xx (safe to retry).
 */
export async function park(input: ParkInput, deps: ParkDeps): Promise<ParkResult> {
  const { plan } = input;
  const redriveId = plan.incidentId;
  const targets = new Map<string, { envelope: ParkCandidate; reason: string }>();
  // Envelopes an earlier run moved on: parked again if still here, not `skipped` when gone.
  const earlierRuns = new Set<string>();
  // The history needs every REDRIVEN envelope of the DLQ, which may be listed after the envelopes
  // it decides on: those are kept (without their bodies) and decided after the listing.
  const history = createRedriveHistory();
  const candidates: ParkCandidate[] = [];
  const listing: EnvelopeListing = deps.listing ?? deps.envelopes;
  for await (const envelope of listing.listEnvelopes(plan.dlqArn, CANDIDATE_FIELDS)) {
    history.add(envelope);
    if (envelope.state === 'REDRIVEN') continue;
    const { messageId, idempotencyKey, state, stateReason, classification, redriveCount, sourceArn } =
      envelope;
    candidates.push({
      messageId,
      idempotencyKey,
      state,
      classification,
      redriveCount,
      sourceArn,
      ...(stateReason === undefined ? {} : { stateReason }),
      ...(envelope.origin === undefined ? {} : { origin: envelope.origin }),
      // An extended-client pointer whose object preflight found gone (parkReason).
      ...(envelope.payload === undefined ? {} : { payload: envelope.payload }),
      ...(envelope.payloadGoneAt === undefined ? {} : { payloadGoneAt: envelope.payloadGoneAt }),
    });
  }
  for (const envelope of candidates) {
    const counted = { ...envelope, redriveCount: history.redrivesOf(envelope) };
    // PARKED/DISCARDED envelopes are included, of this run or an earlier one: a crash or failure
    // between record and delete leaves the message in the DLQ with its envelope already moved on
    // (a failed earlier run never reconciles it); if it is gone, no receive matches it.
    const reason =
      envelope.state === 'IN_DLQ'
        ? parkReason(counted, plan)
        : (parkReason(counted, plan) ?? envelope.stateReason?.replace(RUN_SUFFIX, '') ?? 'parked earlier');
    if (!reason) continue;
    targets.set(envelope.messageId, { envelope, reason });
    if (envelope.state !== 'IN_DLQ' && !envelope.stateReason?.endsWith(`(run ${redriveId})`))
      earlierRuns.add(envelope.messageId);
  }
  const result: ParkResult = { parked: 0, discarded: 0, skipped: 0, duplicateSendsPrevented: 0 };
  if (targets.size === 0) return result;
  const ownTargets = targets.size - earlierRuns.size;
  if (ownTargets > 0 && !plan.discardPoison && !plan.parkingQueueUrl)
    throw new RedriveRefusedError(
      `${ownTargets} message(s) must stay out of the bulk move but no parking queue is configured (registration parkingQueueArn or PARKING_QUEUE_URL); set discardPoison to discard them instead`,
    );

  const vt = parkVisibilityTimeoutSeconds(
    queueDepth(await deps.queues.describe(plan.dlqUrl)),
    deps.visibilityTimeoutSeconds,
  );
  const runId = runIdOf(plan);
  const parkingMaxBytes =
    !plan.discardPoison && plan.parkingQueueUrl
      ? (await deps.queues.describe(plan.parkingQueueUrl)).maximumMessageSize
      : null;
  const tooLarge: string[] = [];
  // A crashed attempt (this run's, or an earlier run's of any incident) hid its message until the
  // receive's visibility timeout ends: wait for it (bounded by that timeout), or the bulk move
  // could later carry a message already parked. The ledger is read consistently from the table.
  const ledgered = (await deps.ledger.list(plan.dlqArn)).filter((e) => e.kind !== 'redrive');
  const unfinished = ledgered.filter((e) => !e.dlqDeleted);
  const doneEarlier = new Set(ledgered.filter((e) => e.dlqDeleted).map((e) => e.dlqMessageId));
  if (unfinished.length > 0) {
    const now = deps.now ?? Date.now;
    const wait = Math.min(Math.max(...unfinished.map((e) => e.visibleAfter)) - now(), vt * 1000) + 250;
    if (wait > 0) await (deps.sleep ?? sleep)(wait);
  }
  // State changes wait for a flush; the ones a crashed attempt of this incident did not write
  // (its ledger entry says the message is gone, the envelope is still IN_DLQ) are written first.
  const changes: StateChange[] = [];
  const flush = () => deps.envelopeStates.setStates(plan.dlqArn, changes.splice(0));
  // One BatchExecuteStatement's worth; the rest waits for the next (batches of 10 come in past 25).
  const flushSome = () => deps.envelopeStates.setStates(plan.dlqArn, changes.splice(0, STATE_FLUSH));
  for (const entry of ledgered) {
    const target = targets.get(entry.dlqMessageId);
    if (!entry.dlqDeleted || entry.incidentId !== plan.incidentId || target?.envelope.state !== 'IN_DLQ')
      continue;
    const state = STATE_OF_KIND[entry.kind];
    changes.push({ messageId: entry.dlqMessageId, state, reason: `${target.reason} (run ${redriveId})` });
  }
  // What the scan still has to find: a target whose ledger entry says its DLQ copy is gone (a
  // crashed attempt parked it) will not be received, and waiting for it would keep the scan
  // re-receiving what it holds until its budget or the invocation ran out.
  let remaining = [...targets.keys()].filter((id) => !doneEarlier.has(id)).length;
  // What this run must have parked before the move task: an earlier run's envelope that is gone
  // is history, not a reason to wait or refuse.
  const pendingNow = () =>
    [...targets.keys()].filter((id) => !earlierRuns.has(id) && !doneEarlier.has(id)).length;
  const maxMessages = deps.maxMessages ?? PARK_MAX_MESSAGES;
  const busy = new Set<string>();
  // Targets this run could not move (SQS refused the copy, the delete failed, another run took the
  // entry over): released back to the DLQ; the run then fails rather than leave them to the move task.
  const refused: string[] = [];
  const notParked: string[] = [];
  // Targets received and kept (the scan counts them consumed) until a batch is full or the scan ends.
  const gathered: ParkTransferRequest[] = [];
  const discard = plan.discardPoison || !plan.parkingQueueUrl;
  const settle = async (requests: ParkTransferRequest[]): Promise<void> => {
    if (requests.length === 0) return;
    const outcomes = await parkBatch(requests, deps);
    const release: string[] = [];
    requests.forEach((request, i) => {
      const messageId = request.message.MessageId as string;
      const target = targets.get(messageId);
      const outcome = outcomes[i] as ParkTransferResult;
      if (!target) return;
      if ((outcome.result === 'sent' || outcome.result === 'duplicate-prevented') && outcome.deleted) {
        if (outcome.result === 'duplicate-prevented') result.duplicateSendsPrevented += 1;
        // The state follows the ledger entry (a taken-over entry keeps its earlier decision),
        // written once the DLQ copy is gone: an envelope state is always backed by the ledger.
        const state = STATE_OF_KIND[outcome.kind];
        const reason =
          outcome.kind === 'redrive'
            ? `sample redrive taken over (run ${redriveId})`
            : `${target.reason} (run ${redriveId})`;
        if (target.envelope.state !== state || target.envelope.stateReason !== reason)
          changes.push({ messageId: target.envelope.messageId, state, reason });
        remaining -= 1;
        targets.delete(messageId);
        return;
      }
      release.push(request.message.ReceiptHandle as string);
      if (outcome.result === 'busy') busy.add(outcome.owner);
      else if (outcome.result === 'send-failed' && outcome.senderFault) {
        refused.push(`${messageId} (${outcome.code}: ${outcome.message})`);
        // SQS refused this copy for what it is: sending it again would be refused again, so the
        // scan stops looking for it (it stays in the DLQ, released, and the run is refused).
        targets.delete(messageId);
        remaining -= 1;
      } else
        notParked.push(
          outcome.result === 'send-failed'
            ? `${messageId} (send failed, ${outcome.code}: ${outcome.message})`
            : outcome.result === 'taken-over'
              ? `${messageId} (taken over by another run)`
              : `${messageId} (sent, not yet deleted from the DLQ)`,
        );
    });
    // What stays in the DLQ is visible again at once, for the retry (or this scan's next pass).
    if (release.length > 0) await deps.queues.changeVisibility(plan.dlqUrl, release, 0);
    while (changes.length >= STATE_FLUSH) await flushSome();
  };
  const settleGathered = () => settle(gathered.splice(0));
  // The batch being visited: its messages are the scan's to release only once the visit returns.
  let visiting: string[] = [];
  const scan = await scanUntilFound(
    deps.queues,
    {
      queueUrl: plan.dlqUrl,
      visibilityTimeoutSeconds: vt,
      maxMessages,
      // Redrivable messages stay held until the targets behind them are found (far below SQS's
      // ~120,000 in-flight limit): releasing them early would hand them back to this same scan.
      maxHeld: maxMessages,
      ...(deps.sleep ? { sleep: deps.sleep } : {}),
      settle: settleGathered,
      // A gathered message whose visibility ended before its batch moved, received again: only
      // its latest receipt handle deletes it (an older one succeeds and may delete nothing), and
      // its lease starts again.
      receivedAgain: (message) => {
        const request = gathered.find((r) => r.message.MessageId === message.MessageId);
        if (!request) return false;
        request.message = { ...request.message, ReceiptHandle: message.ReceiptHandle as string };
        request.receivedAt = (deps.now ?? Date.now)();
        return true;
      },
    },
    async (batch) => {
      visiting = batch.map((m) => m.ReceiptHandle as string);
      const receivedAt = (deps.now ?? Date.now)();
      const results = new Map<string, VisitResult>();
      for (const message of batch) {
        const target = targets.get(message.MessageId as string);
        if (!target) {
          results.set(message.MessageId as string, 'hold');
          continue;
        }
        // An earlier run's PARKED/DISCARDED envelope still here, and nowhere to put it.
        if (!plan.discardPoison && !plan.parkingQueueUrl)
          throw new RedriveRefusedError(
            `message ${message.MessageId} must stay out of the bulk move (${target.reason}) but no parking queue is configured and discardPoison is not set`,
          );
        const request: ParkTransferRequest = {
          message,
          receivedAt,
          key: parkLedgerKey(target.envelope),
          incidentId: plan.incidentId,
          redriveId: runId,
          kind: discard ? 'discard' : 'park',
          dlqArn: plan.dlqArn,
          dlqUrl: plan.dlqUrl,
          destinationMaxBytes: discard ? null : parkingMaxBytes,
          // The parking queue's own type decides MessageGroupId/MessageDeduplicationId.
          destinationUrl: discard ? null : plan.parkingQueueUrl,
          visibilityTimeoutSeconds: vt,
          addPipelineAttributes: false,
        };
        // Checked before anything is recorded: a message that cannot be sent stays as it is.
        const unsendable = outgoingOf(request).result;
        if (unsendable?.result === 'too-large') {
          tooLarge.push(
            `${message.MessageId} (${unsendable.sizeBytes} bytes, the parking queue takes ${unsendable.limitBytes})`,
          );
          targets.delete(message.MessageId as string);
          remaining -= 1;
          results.set(message.MessageId as string, 'hold');
          continue;
        }
        gathered.push(request);
        results.set(message.MessageId as string, 'consumed');
      }
      while (gathered.length >= PARK_BATCH) await settle(gathered.splice(0, PARK_BATCH));
      // Every target still to move is gathered: move them now and end the scan.
      if (remaining - gathered.length <= 0) await settleGathered();
      visiting = [];
      return { results, stop: remaining <= 0 };
    },
    pendingNow,
  ).catch(async (error: unknown) => {
    // What this attempt still holds goes back to the DLQ for the retry (gathered messages, and the
    // batch being visited: a message already deleted fails its entry, harmlessly; one sent and not
    // deleted is deleted by the retry without a second send); what was moved before the failure
    // keeps its state; a flush that fails too is left to the retry (it writes the states of this
    // run's finished ledger entries first).
    const handles = [
      ...new Set([...visiting, ...gathered.splice(0).map((r) => r.message.ReceiptHandle as string)]),
    ];
    if (handles.length > 0) await deps.queues.changeVisibility(plan.dlqUrl, handles, 0).catch(() => 0);
    await flush().catch(() => undefined);
    throw error;
  });
  await flush();
  // A target left in the DLQ would be carried back to its source by the bulk move.
  if (tooLarge.length > 0)
    throw new RedriveRefusedError(
      `${tooLarge.length} message(s) to park are larger than the parking queue's MaximumMessageSize and stay in the DLQ, where a move task would carry them back to their source: ${tooLarge.slice(0, 5).join(', ')}${tooLarge.length > 5 ? ', ...' : ''}; raise the parking queue's MaximumMessageSize or set discardPoison`,
    );
  if (pendingNow() > 0 && scan.truncated)
    throw new RedriveRefusedError(
      `${pendingNow()} message(s) to park were not reached within ${maxMessages} received messages; left in the DLQ, a move task would carry them back to their source`,
    );
  if (refused.length > 0)
    throw new RedriveRefusedError(
      `${refused.length} message(s) to park were refused by the parking queue and stay in the DLQ, where a move task would carry them back to their source: ${refused.slice(0, 5).join(', ')}${refused.length > 5 ? ', ...' : ''}`,
    );
  if (notParked.length > 0)
    throw new TransientError(
      `${notParked.length} message(s) to park are not parked yet and stay in the DLQ; the retry finishes them without sending twice: ${notParked.slice(0, 5).join(', ')}${notParked.length > 5 ? ', ...' : ''}`,
    );
  if (busy.size > 0)
    throw new TransientError(
      `message(s) to park are held by another run of the pipeline (${[...busy].join(', ')}) whose lease is not over; retry after it`,
    );
  if (pendingNow() > 0 && scan.inFlight > 0)
    throw new TransientError(
      `${pendingNow()} message(s) to park are still held invisible by another receiver (${scan.inFlight} in flight in ${plan.dlqUrl}); retry once their visibility timeout ends`,
    );
  // Counts come from the ledger, so a retry after a crash (or a restart) reports every run of the
  // incident, not its own part.
  const done = new Set<string>();
  for (const entry of await deps.ledger.list(plan.dlqArn)) {
    if (!entry.dlqDeleted || entry.incidentId !== plan.incidentId) continue;
    if (entry.kind === 'park') result.parked += 1;
    else if (entry.kind === 'discard') result.discarded += 1;
    else continue;
    done.add(entry.dlqMessageId);
  }
  // FIFO: a receive returns no later message of a group while earlier ones are in flight, so a
  // scan that holds the messages it does not park cannot reach a target behind ten of its group.
  if (pendingNow() > 0 && plan.dlqArn.endsWith('.fifo') && scan.visible > 0)
    throw new RedriveRefusedError(
      `${pendingNow()} do-not-redrive message(s) of this FIFO DLQ were not received: they can sit behind other messages of their message group, which a receive cannot skip, and the move task would carry them; move them out by hand first`,
    );
  // Targets neither handled now nor by an earlier attempt: gone from the DLQ (nothing in flight).
  result.skipped = [...targets.keys()].filter((id) => !done.has(id) && !earlierRuns.has(id)).length;
  return result;
}

export { parkReason };
