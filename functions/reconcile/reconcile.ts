/**
 * Reconcile: a final inventory of the DLQ, then every envelope of the incident (across all its
 * runs, restarts included) ends in exactly one state, and each state rests on evidence
 * (DESIGN.md "Reconciliation"):
 *
 * - still in the DLQ (found by the inventory) -> IN_DLQ;
 * - gone, and the redrive ledger has an entry for that DLQ MessageId that is SENT or deleted ->
 *   REDRIVEN, PARKED or DISCARDED as the entry says (whichever run or incident wrote it; this also
 *   repairs a crash between the delete and the envelope update);
 * - gone, already REDRIVEN / PARKED / DISCARDED by an earlier step or reconcile -> that state;
 * - gone with no such record: REDRIVEN by the move task only within what the incident's move tasks
 *   report as moved (ApproximateNumberOfMessagesMoved, never more); `inFlight` when the DLQ still
 *   holds messages invisible after the scan waited for them; the rest is `missing` (left the DLQ
 *   outside the pipeline, or expired).
 *
 * `inventoried + lateArrivals + returned == redriven + parked + discarded + inDlq + inFlight +
 * missing`, and the run is `balanced` only when that holds and `missing == 0`. When the gone
 * envelopes cannot all be explained, the ones with evidence of arrival (a consumer recorded their
 * key as processed after they were last seen in the DLQ, or their key is back in the DLQ under a
 * new MessageId) are REDRIVEN (beyond the tasks' count: `redrivenOutside`, moved outside the
 * pipeline), and the others are named in `missingMessages` (exactly the missing ones when their
 * number matches, else the candidates, `missingExact: false`); those envelopes stay IN_DLQ until a
 * later reconcile settles them. Returned samples and other messages first seen now get new
 * envelopes marked as late arrivals of the incident. The result is written to the incident, then
 * the envelopes' states, in bulk (PartiQL UPDATEs, 25 a call): a crash between the two leaves
 * envelopes IN_DLQ that a retry, or a restart's Preflight (`unsettled`), reconciles again.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ListMessageMoveTasks.html
 */

import type { ProcessedKeysReader } from '#consumer/processed-keys.js';
import { ExecutionPlan } from '#incident/execution-plan.js';
import { type REDRIVE_OUTCOMES, type RunRecorder, recordRunOnIncident } from '#incident/notifier.js';
import type { OpenIncidents } from '#incident/open-incident.js';
import {
  CANDIDATE_FIELDS,
  type EnvelopeCandidate,
  type EnvelopeListing,
} from '#inventory/envelope-listing.js';
import type { EnvelopeStates, StateChange } from '#inventory/envelope-states.js';
import type { EnvelopeStore, StoredEnvelope } from '#inventory/envelope-store.js';
import { type InventoryDeps, inventoryDlq, inventoryRefusal } from '#inventory/inventory.js';
import type { EnvelopeState, QueueRegistration } from '#inventory/model.js';
import type { RunMetrics } from '#platform/metrics.js';
import type { SqsQueues } from '#platform/sqs-queues.js';
import * as z from '#platform/zod.js';
import type { MoveTasks } from '#transfer/move-tasks.js';
import { entryDone, envelopeIdOf, type LedgerEntry, type RedriveLedger } from '#transfer/redrive-ledger.js';

/** Input of the Reconcile function. */
export const ReconcileInput = z.object({
  plan: ExecutionPlan,
  outcome: z._default(z.string(), 'completed') as z.ZodMiniType<(typeof REDRIVE_OUTCOMES)[number] | string>,
});
export type ReconcileInput = z.infer<typeof ReconcileInput>;

/** A DLQ message named in the report. */
export interface NamedMessage {
  messageId: string;
  idempotencyKey: string;
}

/** Most messages listed in `missingMessages` / `possibleDuplicates` (the counts are always complete). */
export const MAX_NAMED_MESSAGES = 100;

/** `$.reconcile` (docs/contracts.md) plus the details behind the counts. */
export interface ReconcileResult {
  /** Envelopes of the incident's own inventory. */
  inventoried: number;
  /**
   * Envelopes first stored by a workflow step of the incident (`lateArrival`): messages that
   * dead-lettered after triage. Returned copies of keys the incident redrove are `returned`.
   */
  lateArrivals: number;
  /**
   * Messages the move tasks reported moved beyond the envelopes they account for: late arrivals
   * carried before any inventory saw them (`max(0, movedReported - envelopes REDRIVEN by a task)`).
   */
  lateMovedUnclassified: number;
  redriven: number;
  parked: number;
  discarded: number;
  inDlq: number;
  /** Gone from the inventory's view but still held invisible in the DLQ when the scan gave up waiting. */
  inFlight: number;
  /** Gone from the DLQ with no record of where to: removed outside the pipeline, or expired. */
  missing: number;
  /** Of `missing`: past their retention deadline. */
  expired: number;
  /** The missing messages (at most {@link MAX_NAMED_MESSAGES}). */
  missingMessages: NamedMessage[];
  /** False when `missingMessages` lists candidates (more than `missing`) that could not be told apart. */
  missingExact: boolean;
  /**
   * Of `redriven`: moved by the incident's move tasks (no ledger entry), whether this reconcile or
   * an earlier one of the incident settled them; never more than `movedReported`.
   */
  movedByTask: number;
  /** ApproximateNumberOfMessagesMoved summed over the incident's move tasks: the bound of `movedByTask`. */
  movedReported: number;
  /**
   * Of `redriven`: gone from the DLQ with no ledger entry, beyond what the move tasks report, and
   * processed by a consumer since (its processed-key record): moved outside the pipeline (by hand,
   * another tool) and delivered. Without such evidence they would be `missing`.
   */
  redrivenOutside: number;
  duplicateSendsPrevented: number;
  /**
   * Messages a retry or a restart sent again after a crash between ledger record and send, to a
   * standard queue: the destination may have received them twice (consumers skip them by
   * `idempotency-key`); and messages an attempt that died between its record and SENT may have
   * sent while they are still in the DLQ (nothing resumed the entry yet: a failed run reconciled
   * before its restart), so a copy may be at the destination and another in the DLQ.
   */
  possibleDuplicateSends: number;
  /**
   * Those messages (at most {@link MAX_NAMED_MESSAGES}); `kind` says where the copy went: the
   * source queue (`redrive`) or the parking queue (`park`).
   */
  possibleDuplicates: Array<NamedMessage & { kind: LedgerEntry['kind'] }>;
  /** Ledger entries a run of the incident took over from an earlier run whose lease had ended. */
  takenOver: number;
  /** Late-arrival envelopes that carry the key of an envelope the incident redrove (a copy that came back). */
  returned: number;
  /** True when the inventory did not see the whole DLQ (budget/time): unseen envelopes count as IN_DLQ. */
  partial: boolean;
  /** The counts add up and `missing == 0`. */
  balanced: boolean;
}

/** A result with every count 0, nothing named, and `partial` (no inventory has seen the whole DLQ yet). */
export function emptyReconcileResult(): ReconcileResult {
  return {
    inventoried: 0,
    lateArrivals: 0,
    lateMovedUnclassified: 0,
    redriven: 0,
    parked: 0,
    discarded: 0,
    inDlq: 0,
    inFlight: 0,
    missing: 0,
    expired: 0,
    missingMessages: [],
    missingExact: true,
    movedByTask: 0,
    movedReported: 0,
    redrivenOutside: 0,
    duplicateSendsPrevented: 0,
    possibleDuplicateSends: 0,
    possibleDuplicates: [],
    takenOver: 0,
    returned: 0,
    partial: true,
    balanced: false,
  };
}

/** Ports of {@link reconcile}. */
export interface ReconcileDeps {
  queues: SqsQueues;
  envelopes: EnvelopeStore;
  /**
   * The envelope listing with projections (envelope-listing.ts): only {@link CANDIDATE_FIELDS}
   * come back. The handler always passes it. @default `envelopes.listEnvelopes` (full envelopes)
   */
  listing?: EnvelopeListing;
  /** The envelopes' state changes, written in bulk. */
  envelopeStates: EnvelopeStates;
  ledger: Pick<RedriveLedger, 'list'>;
  moveTasks: Pick<MoveTasks, 'list'>;
  registrations: { getRegistration(dlqArn: string): Promise<QueueRegistration> };
  incidents: RunRecorder;
  /** Cleared once nothing of the incident is left in the DLQ (a later console start opens a new one). */
  openIncidents?: Pick<OpenIncidents, 'close'>;
  /** Consumer-reported processed keys: evidence that a moved message arrived. @default none */
  processed?: Pick<ProcessedKeysReader, 'processedSince'>;
  remainingTimeMs: InventoryDeps['remainingTimeMs'];
  now: () => number;
  /** The run's final counts as CloudWatch metrics (platform/metrics.ts). Absent: none published. */
  metrics?: RunMetrics;
  sleep?: (ms: number) => Promise<void>;
}

/** What Reconcile keeps of an envelope it cannot explain yet (no body: there can be 100,000). */
type Unexplained = Pick<
  StoredEnvelope,
  'messageId' | 'idempotencyKey' | 'lastSeenAt' | 'retentionDeadline' | 'lateArrival' | 'incidentId'
>;

const LEDGER_STATE: Record<LedgerEntry['kind'], EnvelopeState> = {
  redrive: 'REDRIVEN',
  park: 'PARKED',
  discard: 'DISCARDED',
};

/** True when `entry` rather than `earlier` (both for one envelope) says where the message is now. */
function supersedes(entry: LedgerEntry, earlier: LedgerEntry): boolean {
  if (entryDone(entry) !== entryDone(earlier)) return entryDone(entry);
  return entry.updatedAt > earlier.updatedAt;
}

const named = (e: Pick<StoredEnvelope, 'messageId' | 'idempotencyKey'>): NamedMessage => ({
  messageId: e.messageId,
  idempotencyKey: e.idempotencyKey,
});

/** True when the envelope belongs to the incident's accounting (see the module comment). */
function belongs(envelope: EnvelopeCandidate, incidentId: string, entry: LedgerEntry | undefined): boolean {
  return (
    envelope.state === 'IN_DLQ' ||
    envelope.incidentId === incidentId ||
    (envelope.stateReason?.includes(`(run ${incidentId})`) ?? false) ||
    entry?.incidentId === incidentId
  );
}

/**
 * Messages moved by the DLQ's move tasks that started after `sinceMs` (a task cannot have moved a
 * message it started before the message was last seen in the DLQ).
 */
async function movedByTasks(deps: ReconcileDeps, dlqArn: string, sinceMs: number): Promise<number> {
  const tasks = await deps.moveTasks.list(dlqArn);
  return tasks
    .filter((t) => t.startedAt !== null && t.startedAt >= sinceMs - 1000)
    .reduce((sum, t) => sum + Math.max(0, t.moved), 0);
}

/** Keys among `keys` a consumer recorded as processed at or after `sinceMs`: the latest processedAt (epoch ms) of each. */
async function processedKeys(
  deps: ReconcileDeps,
  keys: readonly string[],
  sinceMs: number,
): Promise<Map<string, number>> {
  if (!deps.processed || keys.length === 0) return new Map();
  const found = await deps.processed.processedSince(keys, new Date(sinceMs));
  return new Map(
    [...found].map(([key, records]) => [
      key,
      Math.max(...records.map((r) => Date.parse(r.processedAt) || 0)),
    ]),
  );
}

/**
 * Reconciles the incident.
 * @throws TransientError on throttling/5xx (safe to retry: every write is idempotent).
 */
export async function reconcile(input: ReconcileInput, deps: ReconcileDeps): Promise<ReconcileResult> {
  const { plan } = input;
  const incidentId = plan.incidentId;
  const now = deps.now();

  // 1. What is in the DLQ now (and envelopes, marked late arrivals, for messages first seen now).
  // The scan waits for messages other receivers hold in flight, within the time budget.
  const dlq = await deps.queues.describe(plan.dlqUrl);
  const registration = await deps.registrations.getRegistration(plan.dlqArn);
  const present = new Set<string>();
  let partial = true;
  let othersInFlight = 0;
  if (!inventoryRefusal(dlq, registration)) {
    const scan = await inventoryDlq(
      { dlq, registration, incidentId, lateArrival: true },
      {
        queues: deps.queues,
        envelopes: deps.envelopes,
        remainingTimeMs: deps.remainingTimeMs,
        now: deps.now,
        ...(deps.sleep ? { sleep: deps.sleep } : {}),
      },
    );
    for (const e of scan.envelopes) present.add(e.messageId);
    partial = scan.stopReason !== 'empty' && scan.stopReason !== 'in-flight';
    othersInFlight = scan.othersInFlight;
  }

  // 2. What the pipeline did with each DLQ message, whichever run or incident did it.
  const ledger = new Map<string, LedgerEntry>();
  const result: ReconcileResult = { ...emptyReconcileResult(), partial };

  for (const entry of await deps.ledger.list(plan.dlqArn)) {
    // Per envelope, its latest done entry decides (an un-park after a park: REDRIVEN, not PARKED).
    const envelopeId = envelopeIdOf(entry);
    const earlier = ledger.get(envelopeId);
    if (!earlier || supersedes(entry, earlier)) ledger.set(envelopeId, entry);
    if (entry.incidentId !== incidentId) continue;
    if (entry.duplicatePrevented) result.duplicateSendsPrevented += 1;
    if (entry.takenOverFrom.length > 0) result.takenOver += 1;
    // A copy may be at the destination as well as in the DLQ: sent again by a retry (`resent`), or
    // sent by an attempt that died before its entry said SENT and that nothing resumed yet (a run
    // that failed and was reconciled before a restart: ReconcileAfterFailure).
    const copyMayExist = entry.resent || (!entryDone(entry) && entry.kind !== 'discard');
    if (copyMayExist && entry.destinationUrl && !entry.destinationUrl.endsWith('.fifo')) {
      result.possibleDuplicateSends += 1;
      // Park's ledger key is `<idempotency key>@<messageId>`: name the message by its own key.
      const suffix = `@${entry.dlqMessageId}`;
      const idempotencyKey = entry.key.endsWith(suffix) ? entry.key.slice(0, -suffix.length) : entry.key;
      if (result.possibleDuplicates.length < MAX_NAMED_MESSAGES)
        result.possibleDuplicates.push({ messageId: envelopeIdOf(entry), idempotencyKey, kind: entry.kind });
    }
  }

  // 3. Every envelope of the incident ends in exactly one state; the unexplained ones wait for step 4.
  // REDRIVEN envelopes by idempotency key, and the late arrivals of this incident that are REDRIVEN
  // themselves: a late arrival is a returned copy only when another envelope with its key was
  // redriven (a late arrival the move task or the mover redrove is a late arrival, not a return).
  const redrivenKeys = new Map<string, number>();
  const lateRedriven = new Set<string>();
  const isLate = (envelope: Unexplained) =>
    envelope.lateArrival === true && envelope.incidentId === incidentId;
  const markRedriven = (envelope: Unexplained) => {
    redrivenKeys.set(envelope.idempotencyKey, (redrivenKeys.get(envelope.idempotencyKey) ?? 0) + 1);
    if (isLate(envelope)) lateRedriven.add(envelope.messageId);
  };
  const taskReason = `moved by the move task (run ${incidentId})`;
  const outsideReason = `processed by a consumer, moved outside the pipeline (run ${incidentId})`;
  const presentKeys = new Map<string, number>();
  const late: Array<{ key: string; messageId: string }> = [];
  const unexplained: Unexplained[] = [];
  let byTaskEarlier = 0;
  let since = Number.POSITIVE_INFINITY;
  // State changes are collected here and written in bulk after the report (see the end): a
  // 100,000-message incident changes about 95,000 states (REDRIVEN by the move task), 3,800
  // BatchExecuteStatement calls of 25, 4 side by side, where one UpdateItem at a time outlasted
  // Reconcile's 300 s timeout.
  const changes: StateChange[] = [];
  const change = (messageId: string, state: EnvelopeState, reason: string | undefined) => {
    changes.push({ messageId, state, reason });
  };
  const settle = (envelope: EnvelopeCandidate, state: EnvelopeState, reason: string | undefined) => {
    if (state !== envelope.state || (reason !== undefined && reason !== envelope.stateReason))
      change(envelope.messageId, state, reason);
    if (state === 'REDRIVEN') {
      result.redriven += 1;
      markRedriven(envelope);
    } else if (state === 'PARKED') result.parked += 1;
    else if (state === 'DISCARDED') result.discarded += 1;
    else result.inDlq += 1;
  };
  const listing: EnvelopeListing = deps.listing ?? deps.envelopes;
  for await (const envelope of listing.listEnvelopes(plan.dlqArn, CANDIDATE_FIELDS)) {
    const entry = ledger.get(envelope.messageId);
    if (!belongs(envelope, incidentId, entry)) continue;
    if (isLate(envelope)) late.push({ key: envelope.idempotencyKey, messageId: envelope.messageId });
    else result.inventoried += 1;
    if (present.has(envelope.messageId)) {
      presentKeys.set(envelope.idempotencyKey, (presentKeys.get(envelope.idempotencyKey) ?? 0) + 1);
      settle(envelope, 'IN_DLQ', envelope.state === 'IN_DLQ' ? undefined : 'back in the DLQ');
    } else if (entry && entryDone(entry)) {
      const state = LEDGER_STATE[entry.kind];
      settle(envelope, state, state === envelope.state ? undefined : `${entry.kind} (run ${incidentId})`);
    } else if (envelope.state !== 'IN_DLQ') {
      if (envelope.stateReason === taskReason) {
        byTaskEarlier += 1;
        since = Math.min(since, Date.parse(envelope.lastSeenAt) || 0);
      }
      if (envelope.stateReason === outsideReason) result.redrivenOutside += 1;
      settle(envelope, envelope.state, undefined);
    } else if (partial) settle(envelope, 'IN_DLQ', undefined);
    else {
      const { messageId, idempotencyKey, lastSeenAt, retentionDeadline, lateArrival } = envelope;
      unexplained.push({
        messageId,
        idempotencyKey,
        lastSeenAt,
        retentionDeadline,
        ...(lateArrival === undefined ? {} : { lateArrival }),
        ...(envelope.incidentId === undefined ? {} : { incidentId: envelope.incidentId }),
      });
      since = Math.min(since, Date.parse(envelope.lastSeenAt) || 0);
    }
  }
  // What the move tasks reported moved: the bound on REDRIVEN without a ledger entry.
  if (Number.isFinite(since)) result.movedReported = await movedByTasks(deps, plan.dlqArn, since);

  // 4. Gone without a record: the move tasks' reported count, then messages in flight, bound what
  // may be called redriven by the task; the ones a consumer processed beyond that count were moved
  // outside the pipeline; the rest is missing.
  if (unexplained.length > 0) {
    const inFlight = Math.min(othersInFlight, unexplained.length);
    const moved = Math.min(Math.max(0, result.movedReported - byTaskEarlier), unexplained.length - inFlight);
    result.inFlight = inFlight;
    result.movedByTask = moved;
    result.redriven += moved;
    if (unexplained.length === inFlight + moved && inFlight === 0) {
      for (const envelope of unexplained) {
        change(envelope.messageId, 'REDRIVEN', taskReason);
        markRedriven(envelope);
      }
    } else {
      // Not all can have been moved by the task: the ones with evidence of arrival were (up to its
      // count), or else reached a consumer another way; the others are the candidates, named, and
      // stay IN_DLQ until a later reconcile can tell.
      const consumed = await processedKeys(
        deps,
        unexplained.filter((e) => !presentKeys.has(e.idempotencyKey)).map((e) => e.idempotencyKey),
        since,
      );
      // A consumer's record counts for a message only when written after it was last seen in the DLQ.
      const arrived = unexplained.filter(
        (e) =>
          presentKeys.has(e.idempotencyKey) ||
          (consumed.get(e.idempotencyKey) ?? -1) >= (Date.parse(e.lastSeenAt) || 0),
      );
      const arrivedSet = new Set(arrived);
      const candidates = unexplained.filter((e) => !arrivedSet.has(e));
      const outside = arrived.slice(moved, Math.max(moved, unexplained.length - inFlight));
      for (const [envelope, reason] of [
        ...arrived.slice(0, moved).map((e) => [e, taskReason] as const),
        ...outside.map((e) => [e, outsideReason] as const),
      ]) {
        change(envelope.messageId, 'REDRIVEN', reason);
        markRedriven(envelope);
      }
      result.redrivenOutside += outside.length;
      result.redriven += outside.length;
      const missing = unexplained.length - inFlight - moved - outside.length;
      result.missing = missing;
      // Exact when the candidates are exactly the missing ones: every message the task moved has
      // been processed (the arrivals cover its count) and nothing is still in flight.
      const exact = inFlight === 0 && candidates.length === missing;
      result.missingExact = exact;
      if (missing > 0) {
        result.missingMessages = candidates.slice(0, MAX_NAMED_MESSAGES).map(named);
        result.expired = candidates.filter((e) => e.retentionDeadline <= now).length;
        if (!exact) result.expired = Math.min(result.expired, missing);
      }
    }
  }
  for (const { key, messageId } of late) {
    const others = (redrivenKeys.get(key) ?? 0) - (lateRedriven.has(messageId) ? 1 : 0);
    if (others > 0) result.returned += 1;
    else result.lateArrivals += 1;
  }
  // An earlier reconcile of the incident (a retry after a crash, a restart's) settled some of the
  // moved envelopes already: they are moved by the task all the same, within the task's count.
  const byTask = result.movedByTask + byTaskEarlier;
  result.movedByTask = Math.min(byTask, result.movedReported);
  result.lateMovedUnclassified = Math.max(0, result.movedReported - byTask);
  result.balanced =
    result.missing === 0 &&
    result.inventoried + result.lateArrivals + result.returned ===
      result.redriven + result.parked + result.discarded + result.inDlq + result.inFlight + result.missing;

  await recordRunOnIncident(deps.incidents, incidentId, { reconcile: result });
  // The states after the report: a crash between the two leaves envelopes IN_DLQ whose messages
  // are gone, which a retry settles again and a restart's Preflight counts as unsettled (its run
  // reconciles them). Written before the report, a crash after the last of them would leave
  // nothing unsettled and no report: the restart would end NothingToRedrive without one.
  // PartiQL UPDATEs, 25 a call, each idempotent.
  await deps.envelopeStates.setStates(plan.dlqArn, changes);
  deps.metrics?.record(plan.dlqArn, {
    Inventoried: result.inventoried,
    Redriven: result.redriven,
    Parked: result.parked,
    Discarded: result.discarded,
    Missing: result.missing,
    StillInDlq: result.inDlq,
  });
  if (result.balanced && !partial && result.inDlq === 0 && result.inFlight === 0)
    await deps.openIncidents?.close(plan.dlqArn, incidentId);
  return result;
}
