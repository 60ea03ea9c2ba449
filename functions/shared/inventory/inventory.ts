/**
 * The DLQ inventory: receive every message (10 per call, all attributes), turn each into an
 * envelope, store them, then release them so the DLQ holds exactly what it held before.
 *
 * Safety rules:
 * - Messages stay invisible only while the scan runs: the visibility timeout is sized to the
 *   Lambda's remaining time (plus a margin), and every held message is released with
 *   ChangeMessageVisibilityBatch(0) in a `finally`, on success and on failure.
 * - In-flight messages stay well below SQS's ~120,000 limit for standard queues (20,000 FIFO):
 *   a run never holds more than `pageBudget` messages.
 * - A run stops within `messageBudget` new envelopes and before the Lambda runs out of time; such a
 *   run is partial (`partial: true`, `stopReason` says why) and the caller stores a cursor.
 * - FIFO: SQS hides later messages of a message group while earlier ones are in flight, so a scan
 *   that saw fewer messages than ApproximateNumberOfMessages reported is partial
 *   (`fifo-groups-blocked`), never silently complete.
 * - "Empty" means visible + in flight + delayed is 0. A receive that comes back empty while the DLQ
 *   reports messages in flight that this scan does not hold (a crashed run's receive, a console
 *   poll) or delayed messages waits for them (polling GetQueueAttributes) within the time budget;
 *   when the budget runs out first the run is partial (`in-flight`), never "empty".
 * - A DLQ with its own RedrivePolicy is refused unless the registration allows it: every receive
 *   counts toward its maxReceiveCount, so an inventory could push messages onward. Allowed, the
 *   run first counts the peeks its messages can still afford (receive-budget.ts) and receives
 *   nothing when one of them cannot take one more (`receive-budget`, partial, the warning names
 *   the message); its envelopes say their receive count includes the pipeline's peeks.
 * - With {@link InventoryInput.hold} the run is one invocation of an inventory that spans several
 *   (`inventory-session.ts`): messages are hidden until the session's planned end, and a run that
 *   stops on its message budget or the Lambda's time hands the messages it holds over (their
 *   receipt handles go to `hold.record`, in pages, and out of memory) instead of releasing them;
 *   what it cannot account for (an envelope not written) is released. Memory then stays flat:
 *   envelopes are summarised as they are written, and at most {@link RECORD_EVERY} receipt
 *   handles are in memory at once.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html
 */

import { errorMessage } from '#platform/errors.js';
import type { QueueInfo, SqsQueues } from '#platform/sqs-queues.js';
import type { ClassificationRule, FailureAttributeNames } from './classification-rules.js';
import { buildEnvelope, type EnvelopeWrite } from './envelope.js';
import type { EnvelopeStore } from './envelope-store.js';
import type { Envelope, QueueRegistration } from './model.js';
import { describeBudget, type ReceiveBudget, receiveBudget } from './receive-budget.js';

/** Budgets of one inventory run. */
export interface InventoryBudgets {
  /** Most new envelopes one run stores. @default 5000 */
  messageBudget: number;
  /** Most messages held invisible at once; keep well below 120,000. @default 10000 */
  pageBudget: number;
  /** Stop receiving when the Lambda has less than this left, milliseconds. @default 15000 */
  safetyMarginMs: number;
}

/** Default budgets. */
export const DEFAULT_BUDGETS: InventoryBudgets = {
  messageBudget: 5000,
  pageBudget: 10_000,
  safetyMarginMs: 15_000,
};

/** putEnvelopes calls (of up to 100 envelopes each) running while the scan goes on. */
const MAX_WRITES_IN_FLIGHT = 4;

/** SQS's in-flight limit for standard queues (FIFO: 20,000). */
export const SQS_IN_FLIGHT_LIMIT = 120_000;
/** The in-flight limit this pipeline assumes for FIFO queues. */
export const SQS_FIFO_IN_FLIGHT_LIMIT = 20_000;
/** In hold mode, receipt handles are handed to `hold.record` in pages of this many. */
export const RECORD_EVERY = 500;

/**
 * How an inventory that spans invocations holds its messages (see `inventory-session.ts`).
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html (in-flight messages)
 */
export interface InventoryHold {
  /** Received messages stay invisible until then, epoch milliseconds (12 h at most from now). */
  untilMs: number;
  /** Messages earlier invocations of the session hold now. */
  alreadyHeld: number;
  /** Most messages the session may hold at once, earlier invocations included. */
  limit: number;
  /** Keeps receipt handles the session goes on holding (after their envelopes are written). */
  record(handles: readonly string[]): Promise<void>;
}

/** Why a run stopped. */
export type StopReason =
  | 'empty'
  | 'message-budget'
  | 'page-budget'
  | 'time'
  | 'fifo-groups-blocked'
  | 'in-flight'
  | 'receive-budget';

/** Dependencies of {@link inventoryDlq}. */
export interface InventoryDeps {
  queues: Pick<SqsQueues, 'receive' | 'changeVisibility' | 'describe'>;
  envelopes: EnvelopeStore;
  /** Lambda's `context.getRemainingTimeInMillis`. */
  remainingTimeMs: () => number;
  /** Epoch milliseconds. */
  now: () => number;
  /** @default setTimeout */
  sleep?: (ms: number) => Promise<void>;
}

/** Input of {@link inventoryDlq}. */
export interface InventoryInput {
  dlq: QueueInfo;
  registration: QueueRegistration;
  incidentId: string;
  budgets?: Partial<InventoryBudgets>;
  rules?: readonly ClassificationRule[];
  failureAttributes?: FailureAttributeNames;
  /** Long-poll wait of each receive, seconds. @default 1 */
  waitTimeSeconds?: number;
  /**
   * Mark the envelopes this run creates `lateArrival: true`: any inventory after triage's (the
   * recheck, the ramp's gate, Reconcile) finds messages that dead-lettered after triage.
   */
  lateArrival?: boolean;
  /**
   * The inventory and step this run is (set on every envelope): a message an earlier step of the
   * same inventory stored is a duplicate delivery, not added again.
   */
  inventory?: { id: string; step: number };
  /** Hold the messages for an inventory that spans invocations (see {@link InventoryHold}). */
  hold?: InventoryHold;
  /**
   * Keep every envelope (without body) in `result.envelopes`; false keeps only the summary, so
   * memory does not grow with the DLQ. @default true
   */
  collectEnvelopes?: boolean;
  /**
   * Told of every envelope this run added to the inventory (stored, not a duplicate of an earlier
   * step), with the time it was stored, epoch ms: an inventory that spans invocations summarises
   * as it goes, so memory does not grow with the DLQ.
   */
  onAdded?: (envelope: Envelope, at: number) => void;
}

/** What one inventory run did. */
export interface InventoryResult {
  /** Envelopes of every distinct message received in this run (no bodies); empty with `collectEnvelopes: false`. */
  envelopes: Envelope[];
  /** Messages this run added to the inventory: envelopes written, duplicates of earlier steps excluded. */
  added: number;
  /** Messages still held at the end and handed over to `hold.record` (hold mode, a run that stops on a budget). */
  handedOver: number;
  received: number;
  /** Messages SQS delivered twice within the run (at-least-once delivery). */
  duplicatesInRun: number;
  written: number;
  created: number;
  /** MessageIds of the envelopes this run created (messages the pipeline had never seen). */
  createdMessageIds: string[];
  unprocessed: number;
  unprocessedMessageIds: string[];
  /** Messages whose envelope could not be built (kept in the DLQ, reported). */
  buildErrors: Array<{ messageId: string; error: string }>;
  partial: boolean;
  stopReason: StopReason;
  released: number;
  releaseFailures: number;
  /** Largest number of messages held invisible at once (by this run, and in hold mode by earlier ones too). */
  maxInFlight: number;
  /**
   * Messages in flight (held by another receiver) or delayed when the scan ended: 0 after a
   * complete scan; with `in-flight` the ones the time budget did not outlast.
   */
  othersInFlight: number;
  /** How long the scan waited for other receivers' in-flight messages, milliseconds. */
  waitedMs: number;
  /** Things the caller should tell a person (e.g. messages held by someone else during the scan). */
  warnings: string[];
  /** SQS and DynamoDB calls made by this run (for the benchmark). */
  apiCalls: { receive: number; changeVisibility: number; putEnvelopes: number };
}

/** Why the inventory of this DLQ is refused, or null when it may go ahead. */
export function inventoryRefusal(dlq: QueueInfo, registration: QueueRegistration): string | null {
  if (dlq.redrivePolicy && !registration.allowInventoryOfQueueWithRedrivePolicy)
    return (
      `${dlq.name} has its own RedrivePolicy (maxReceiveCount ${dlq.redrivePolicy.maxReceiveCount} to ${dlq.redrivePolicy.deadLetterTargetArn}): ` +
      'every inventory receive counts toward it and could move messages onward; set allowInventoryOfQueueWithRedrivePolicy in the registration to allow it'
    );
  return null;
}

/**
 * Inventories one DLQ. Call {@link inventoryRefusal} first.
 *
 * @returns the run's envelopes and counts; `partial` when a budget or the time stopped it.
 * @throws whatever the SQS port or the store throws (held messages are released first).
 */
export async function inventoryDlq(input: InventoryInput, deps: InventoryDeps): Promise<InventoryResult> {
  const budgets = { ...DEFAULT_BUDGETS, ...(input.budgets ?? {}) };
  const limit = input.dlq.fifo ? SQS_FIFO_IN_FLIGHT_LIMIT : SQS_IN_FLIGHT_LIMIT;
  const hold = input.hold;
  const collect = input.collectEnvelopes ?? true;
  const pageBudget = hold
    ? Math.max(10, Math.min(hold.limit, limit))
    : Math.max(10, Math.min(budgets.pageBudget, Math.floor(limit * 0.8)));
  const alreadyHeld = hold?.alreadyHeld ?? 0;
  const result: InventoryResult = {
    envelopes: [],
    added: 0,
    handedOver: 0,
    received: 0,
    duplicatesInRun: 0,
    written: 0,
    created: 0,
    createdMessageIds: [],
    unprocessed: 0,
    unprocessedMessageIds: [],
    buildErrors: [],
    partial: false,
    stopReason: 'empty',
    released: 0,
    releaseFailures: 0,
    maxInFlight: alreadyHeld,
    othersInFlight: 0,
    waitedMs: 0,
    warnings: [],
    apiCalls: { receive: 0, changeVisibility: 0, putEnvelopes: 0 },
  };
  /** Messages this run holds and has not handed over yet: MessageId and receipt handle. */
  let held: Array<{ id: string; handle: string }> = [];
  let heldTotal = 0;
  const seen = new Set<string>();
  const notWritten = new Set<string>();
  let pending: EnvelopeWrite[] = [];
  // Up to MAX_WRITES_IN_FLIGHT putEnvelopes calls overlap with the receives.
  const writes = new Set<Promise<void>>();
  /** Envelopes in putEnvelopes calls not settled yet (they count toward the message budget). */
  let writing = 0;
  let writeError: unknown;
  const settle = async () => {
    await Promise.all([...writes]);
    if (writeError !== undefined) throw writeError;
  };
  const flush = async () => {
    if (writeError !== undefined) throw writeError;
    if (pending.length === 0) return;
    while (writes.size >= MAX_WRITES_IN_FLIGHT) await Promise.race([...writes]);
    const batch = pending;
    pending = [];
    writing += batch.length;
    result.apiCalls.putEnvelopes++;
    const writeBudget = Math.max(1000, deps.remainingTimeMs() - budgets.safetyMarginMs / 2);
    const write = deps.envelopes
      .putEnvelopes(batch, { deadlineMs: deps.now() + writeBudget })
      .then(
        (r) => {
          result.written += r.written;
          result.created += r.created;
          result.createdMessageIds.push(...r.createdMessageIds);
          result.unprocessed += r.unprocessed;
          result.unprocessedMessageIds.push(...r.unprocessedMessageIds);
          for (const id of r.unprocessedMessageIds) notWritten.add(id);
          const skip = new Set([...r.unprocessedMessageIds, ...r.duplicateMessageIds]);
          const at = deps.now();
          for (const w of batch) {
            if (skip.has(w.envelope.messageId)) continue;
            input.onAdded?.(w.envelope, at);
            result.added += 1;
          }
        },
        (error: unknown) => {
          writeError ??= error;
          for (const w of batch) notWritten.add(w.envelope.messageId);
        },
      )
      .finally(() => {
        writes.delete(write);
        writing -= batch.length;
      });
    writes.add(write);
  };
  /**
   * Hands the held messages whose envelopes are written over to the session; the others
   * (an envelope not written) are released, so a later receive sees them again.
   */
  const handOver = async () => {
    if (!hold || held.length === 0) return;
    await flush();
    await settle();
    const keep = held.filter((h) => !notWritten.has(h.id)).map((h) => h.handle);
    const drop = held.filter((h) => notWritten.has(h.id)).map((h) => h.handle);
    await hold.record(keep);
    result.handedOver += keep.length;
    held = [];
    if (drop.length > 0) await release(drop);
  };
  const release = async (handles: string[]) => {
    result.apiCalls.changeVisibility += Math.ceil(handles.length / 10);
    const failed = await deps.queues.changeVisibility(input.dlq.url, handles, 0);
    result.releaseFailures += failed;
    result.released += handles.length - failed;
  };

  // Without a session the visibility timeout covers the scan (and release), not a minute more;
  // with one it covers the session's plan. 12 h is SQS's cap.
  const visibilityTimeoutSeconds = (now: number) =>
    Math.min(
      43_200,
      Math.max(
        30,
        hold ? Math.ceil((hold.untilMs - now) / 1000) : Math.ceil(deps.remainingTimeMs() / 1000) + 30,
      ),
    );
  const fixedVisibility = visibilityTimeoutSeconds(deps.now());
  const budget = input.dlq.redrivePolicy ? await budgetOf(input.dlq, deps.envelopes) : null;
  if (budget && budget.peeksLeft < 1) {
    result.stopReason = 'receive-budget';
    result.partial = true;
    result.warnings.push(`${describeBudget(input.dlq.name, budget)}: nothing was received`);
    return result;
  }
  try {
    for (;;) {
      if (alreadyHeld + heldTotal >= pageBudget) {
        result.stopReason = 'page-budget';
        break;
      }
      if (result.created + writing + pending.length >= budgets.messageBudget) {
        await flush();
        await settle();
        if (result.created >= budgets.messageBudget) {
          result.stopReason = 'message-budget';
          break;
        }
      }
      if (deps.remainingTimeMs() < budgets.safetyMarginMs) {
        result.stopReason = 'time';
        break;
      }
      result.apiCalls.receive++;
      const messages = await deps.queues.receive(input.dlq.url, {
        visibilityTimeoutSeconds: hold ? visibilityTimeoutSeconds(deps.now()) : fixedVisibility,
        waitTimeSeconds: input.waitTimeSeconds ?? 1,
      });
      if (messages.length === 0) {
        // Empty only when visible + in flight + delayed is 0, apart from what this scan holds: a
        // crashed run's receive hides its messages until its visibility timeout ends, and a poll
        // can answer empty while messages remain. (FIFO: visible messages behind this scan's own
        // held groups cannot be received now; see fifo-groups-blocked below.)
        const depth = await deps.queues.describe(input.dlq.url);
        const others =
          Math.max(0, depth.inFlight - seen.size - alreadyHeld) +
          (depth.delayed || 0) +
          (input.dlq.fifo ? 0 : depth.visible || 0);
        result.othersInFlight = others;
        if (others === 0) {
          result.stopReason = 'empty';
          break;
        }
        const pollMs = result.waitedMs < 10_000 ? 1000 : 5000;
        if (deps.remainingTimeMs() - pollMs < budgets.safetyMarginMs) {
          result.stopReason = 'in-flight';
          break;
        }
        await (deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms))))(pollMs);
        result.waitedMs += pollMs;
        continue;
      }
      const now = deps.now();
      for (const message of messages) {
        const id = message.MessageId ?? '';
        if (message.ReceiptHandle) {
          held.push({ id, handle: message.ReceiptHandle });
          heldTotal += 1;
        }
        result.received++;
        if (seen.has(id)) {
          result.duplicatesInRun++;
          continue;
        }
        seen.add(id);
        try {
          const write = buildEnvelope(message, {
            dlqArn: input.dlq.arn,
            fifo: input.dlq.fifo,
            retentionPeriodSeconds: input.dlq.retentionPeriodSeconds,
            now,
            registration: input.registration,
            incidentId: input.incidentId,
            ...(input.lateArrival ? { lateArrival: true } : {}),
            dlqRedrivePolicy: input.dlq.redrivePolicy,
            ...(input.inventory ? { inventory: input.inventory } : {}),
            ...(input.rules ? { rules: input.rules } : {}),
            ...(input.failureAttributes ? { failureAttributes: input.failureAttributes } : {}),
          });
          if (collect) result.envelopes.push(write.envelope);
          pending.push(write);
        } catch (error) {
          notWritten.add(id);
          result.buildErrors.push({ messageId: id, error: errorMessage(error) });
        }
      }
      result.maxInFlight = Math.max(result.maxInFlight, alreadyHeld + heldTotal);
      if (pending.length >= 100) await flush();
      if (hold && held.length >= RECORD_EVERY) await handOver();
    }
    await flush();
    await settle();
    // A run that stopped on a budget hands its messages over; a complete one releases them. So
    // does one that ran out of time waiting for other receivers' in-flight messages: the
    // session's next step waits on.
    if (
      result.stopReason === 'message-budget' ||
      result.stopReason === 'time' ||
      result.stopReason === 'in-flight'
    )
      await handOver();
  } finally {
    await Promise.all([...writes]);
    if (held.length > 0) await release(held.map((h) => h.handle));
    held = [];
  }
  // A FIFO queue returns no more messages of a group while earlier ones of that group are in
  // flight, so a scan that holds messages sees at most one batch per group: if it saw fewer
  // messages than the queue reported, the rest are hidden behind their group, not absent.
  if (result.stopReason === 'empty' && input.dlq.fifo && seen.size < input.dlq.visible) {
    result.stopReason = 'fifo-groups-blocked';
    result.warnings.push(
      `FIFO DLQ: saw ${seen.size} of ${input.dlq.visible} messages; the rest wait behind in-flight messages of their message group`,
    );
  }
  if (result.stopReason === 'in-flight')
    result.warnings.push(
      `${result.othersInFlight} messages stayed in flight (held by another receiver) or delayed until the time budget ran out: the inventory is partial`,
    );
  else if (result.waitedMs > 0)
    result.warnings.push(
      `waited ${Math.round(result.waitedMs / 1000)} s for messages held in flight by another receiver`,
    );
  result.partial = result.stopReason !== 'empty';
  return result;
}

/** The receive budget of a DLQ with its own RedrivePolicy, from its stored envelopes. */
async function budgetOf(dlq: QueueInfo, envelopes: EnvelopeStore): Promise<ReceiveBudget | null> {
  const counts: Array<Pick<Envelope, 'messageId' | 'receiveCount' | 'state'>> = [];
  for await (const e of envelopes.listEnvelopes(dlq.arn))
    counts.push({ messageId: e.messageId, receiveCount: e.receiveCount, state: e.state });
  return receiveBudget(dlq, counts);
}
