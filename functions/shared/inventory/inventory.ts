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
  queues: SqsQueues;
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
   * recheck, the ramp's gate, Reconcile) finds messages that dead-lettered after triage (N02).
   */
  lateArrival?: boolean;
}

/** What one inventory run did. */
export interface InventoryResult {
  /** Envelopes of every distinct message received in this run (no bodies). */
  envelopes: Envelope[];
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
  /** Largest number of messages held invisible at once. */
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
  const limit = input.dlq.fifo ? 20_000 : SQS_IN_FLIGHT_LIMIT;
  const pageBudget = Math.max(10, Math.min(budgets.pageBudget, Math.floor(limit * 0.8)));
  const result: InventoryResult = {
    envelopes: [],
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
    maxInFlight: 0,
    othersInFlight: 0,
    waitedMs: 0,
    warnings: [],
    apiCalls: { receive: 0, changeVisibility: 0, putEnvelopes: 0 },
  };
  const held: string[] = [];
  const seen = new Set<string>();
  let pending: EnvelopeWrite[] = [];
  // Up to MAX_WRITES_IN_FLIGHT putEnvelopes calls overlap with the receives.
  const writes = new Set<Promise<void>>();
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
        },
        (error: unknown) => {
          writeError ??= error;
        },
      )
      .finally(() => writes.delete(write));
    writes.add(write);
  };

  // The visibility timeout covers the scan (and release), not a minute more; 12 h is SQS's cap.
  const visibilityTimeoutSeconds = Math.min(
    43_200,
    Math.max(30, Math.ceil(deps.remainingTimeMs() / 1000) + 30),
  );
  const budget = input.dlq.redrivePolicy ? await budgetOf(input.dlq, deps.envelopes) : null;
  if (budget && budget.peeksLeft < 1) {
    result.stopReason = 'receive-budget';
    result.partial = true;
    result.warnings.push(`${describeBudget(input.dlq.name, budget)}: nothing was received`);
    return result;
  }
  try {
    for (;;) {
      if (held.length >= pageBudget) {
        result.stopReason = 'page-budget';
        break;
      }
      if (result.created + pending.length >= budgets.messageBudget) {
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
        visibilityTimeoutSeconds,
        waitTimeSeconds: input.waitTimeSeconds ?? 1,
      });
      if (messages.length === 0) {
        // Empty only when visible + in flight + delayed is 0, apart from what this scan holds: a
        // crashed run's receive hides its messages until its visibility timeout ends, and a poll
        // can answer empty while messages remain. (FIFO: visible messages behind this scan's own
        // held groups cannot be received now; see fifo-groups-blocked below.)
        const depth = await deps.queues.describe(input.dlq.url);
        const others =
          Math.max(0, depth.inFlight - seen.size) +
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
        if (message.ReceiptHandle) held.push(message.ReceiptHandle);
        result.received++;
        const id = message.MessageId ?? '';
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
            ...(input.rules ? { rules: input.rules } : {}),
            ...(input.failureAttributes ? { failureAttributes: input.failureAttributes } : {}),
          });
          result.envelopes.push(write.envelope);
          pending.push(write);
        } catch (error) {
          result.buildErrors.push({ messageId: id, error: errorMessage(error) });
        }
      }
      result.maxInFlight = Math.max(result.maxInFlight, held.length);
      if (pending.length >= 100) await flush();
    }
    await flush();
    await settle();
  } finally {
    await Promise.all([...writes]);
    if (held.length > 0) {
      result.apiCalls.changeVisibility += Math.ceil(held.length / 10);
      result.releaseFailures = await deps.queues.changeVisibility(input.dlq.url, held, 0);
      result.released = held.length - result.releaseFailures;
    }
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
