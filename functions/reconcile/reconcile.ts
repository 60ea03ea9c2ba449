/**
 * Reconcile: a final inventory of the DLQ, then every envelope of the run ends in exactly one
 * state and the counts must add up (DESIGN.md "Reconciliation"):
 *
 * - still in the DLQ (found by the inventory) -> IN_DLQ;
 * - gone, with a ledger entry of this run that deleted exactly that DLQ MessageId -> REDRIVEN,
 *   PARKED or DISCARDED as the entry says (this also repairs a crash between delete and the
 *   envelope update);
 * - gone, IN_DLQ, and a move task of this run moved messages -> REDRIVEN (moved by the task);
 * - otherwise lost: expired (retention deadline passed) or removed outside the pipeline.
 *
 * `inventoried == redriven + parked + discarded + inDlq + lost`, and the run is clean when
 * `lost == 0`. Returned samples and other messages first seen now get new envelopes from the
 * inventory (same idempotency key as the message they came from: `returned` counts those).
 * The result is written to the incident.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
 */

import { ExecutionPlan } from '#incident/execution-input.js';
import { type REDRIVE_OUTCOMES, type RunRecorder, recordRunOnIncident } from '#incident/notifier.js';
import type { EnvelopeStore, StoredEnvelope } from '#inventory/envelope-store.js';
import { type InventoryDeps, inventoryDlq, inventoryRefusal } from '#inventory/inventory.js';
import type { EnvelopeState, QueueRegistration } from '#inventory/model.js';
import type { RunMetrics } from '#platform/metrics.js';
import type { SqsQueues } from '#platform/sqs-queues.js';
import * as z from '#platform/zod.js';
import type { MoveTasks } from '#transfer/move-tasks.js';
import type { LedgerEntry, RedriveLedger } from '#transfer/redrive-ledger.js';

/** Input of the Reconcile function. */
export const ReconcileInput = z.object({
  plan: ExecutionPlan,
  outcome: z._default(z.string(), 'completed') as z.ZodMiniType<(typeof REDRIVE_OUTCOMES)[number] | string>,
});
export type ReconcileInput = z.infer<typeof ReconcileInput>;

/** `$.reconcile` (docs/contracts.md) plus the details behind the counts. */
export interface ReconcileResult {
  inventoried: number;
  redriven: number;
  parked: number;
  discarded: number;
  inDlq: number;
  lost: number;
  duplicateSendsPrevented: number;
  /**
   * Messages a retry sent again after a crash between ledger record and send, to a standard queue:
   * the destination may have received them twice (consumers skip them by `idempotency-key`).
   */
  possibleDuplicateSends: number;
  /** Of `lost`: past their retention deadline. */
  expired: number;
  /** Envelopes first stored by this inventory that carry the key of an envelope redriven earlier. */
  returned: number;
  /** True when the inventory did not see the whole DLQ (budget/time): unseen envelopes count as IN_DLQ. */
  partial: boolean;
  /** inventoried == redriven + parked + discarded + inDlq + lost, and lost == 0. */
  balanced: boolean;
}

/** Ports of {@link reconcile}. */
export interface ReconcileDeps {
  queues: SqsQueues;
  envelopes: EnvelopeStore;
  ledger: Pick<RedriveLedger, 'listRun'>;
  moveTasks: Pick<MoveTasks, 'list'>;
  registrations: { getRegistration(dlqArn: string): Promise<QueueRegistration> };
  incidents: RunRecorder;
  remainingTimeMs: InventoryDeps['remainingTimeMs'];
  now: () => number;
  /** The run's final counts as CloudWatch metrics (platform/metrics.ts). Absent: none published. */
  metrics?: RunMetrics;
}

const LEDGER_STATE: Record<LedgerEntry['kind'], EnvelopeState> = {
  redrive: 'REDRIVEN',
  park: 'PARKED',
  discard: 'DISCARDED',
};

/**
 * Reconciles the run.
 * @throws TransientError on throttling/5xx (safe to retry: every write is idempotent).
 */
export async function reconcile(input: ReconcileInput, deps: ReconcileDeps): Promise<ReconcileResult> {
  const { plan } = input;
  const redriveId = plan.incidentId;
  const now = deps.now();

  // 1. What is in the DLQ now (and envelopes for messages first seen now).
  const dlq = await deps.queues.describe(plan.dlqUrl);
  const registration = await deps.registrations.getRegistration(plan.dlqArn);
  const present = new Set<string>();
  let partial = true;
  if (!inventoryRefusal(dlq, registration)) {
    const scan = await inventoryDlq(
      { dlq, registration, incidentId: plan.incidentId },
      {
        queues: deps.queues,
        envelopes: deps.envelopes,
        remainingTimeMs: deps.remainingTimeMs,
        now: deps.now,
      },
    );
    for (const e of scan.envelopes) present.add(e.messageId);
    partial = scan.partial;
  }

  // 2. What the run did, by DLQ MessageId. SENT without dlqDeleted: the step died between
  // DeleteMessage and the ledger update (or before the delete: then the message is still present,
  // and presence wins below). Either way a SENT message that is gone went where the entry says.
  const ledger = new Map<string, LedgerEntry>();
  let possibleDuplicateSends = 0;
  for (const entry of await deps.ledger.listRun(redriveId)) {
    if (entry.dlqArn !== plan.dlqArn) continue;
    if (entry.resent && entry.destinationUrl && !entry.destinationUrl.endsWith('.fifo'))
      possibleDuplicateSends += 1;
    if (entry.dlqDeleted || entry.status === 'SENT') ledger.set(entry.dlqMessageId, entry);
  }
  // Start times of move tasks that moved messages, when this run got as far as the bulk move.
  const bulkMoves =
    input.outcome === 'completed' || input.outcome === 'halted' || input.outcome === 'cancelled'
      ? (await deps.moveTasks.list(plan.dlqArn))
          .filter((t) => t.moved > 0 && t.startedAt !== null)
          .map((t) => t.startedAt as number)
      : [];
  // A task can only have moved a message it started after: the envelope was last seen in the DLQ
  // at lastSeenAt (a task of an earlier run does not explain a message missing now).
  const movedByTask = (envelope: StoredEnvelope) => {
    const seen = Date.parse(envelope.lastSeenAt);
    return bulkMoves.some((startedAt) => Number.isNaN(seen) || startedAt >= seen - 1000);
  };

  // 3. Every envelope of the run ends in exactly one state.
  const result: ReconcileResult = {
    inventoried: 0,
    redriven: 0,
    parked: 0,
    discarded: 0,
    inDlq: 0,
    lost: 0,
    duplicateSendsPrevented: 0,
    possibleDuplicateSends,
    expired: 0,
    returned: 0,
    partial,
    balanced: false,
  };
  const redrivenKeys = new Set<string>();
  const fresh: Array<Pick<StoredEnvelope, 'idempotencyKey'>> = [];
  for await (const envelope of deps.envelopes.listEnvelopes(plan.dlqArn)) {
    const ours =
      envelope.state === 'IN_DLQ' ||
      envelope.incidentId === plan.incidentId ||
      (envelope.stateReason?.includes(`(run ${redriveId})`) ?? false) ||
      ledger.has(envelope.messageId);
    if (!ours) continue;
    result.inventoried += 1;
    let state: EnvelopeState | 'LOST';
    let reason: string | undefined;
    const entry = ledger.get(envelope.messageId);
    if (present.has(envelope.messageId)) state = 'IN_DLQ';
    else if (entry) state = LEDGER_STATE[entry.kind];
    else if (envelope.state !== 'IN_DLQ') state = envelope.state;
    else if (partial) state = 'IN_DLQ';
    else if (movedByTask(envelope)) {
      state = 'REDRIVEN';
      reason = `moved by the move task (run ${redriveId})`;
    } else state = 'LOST';

    if (state === 'LOST') {
      result.lost += 1;
      if (envelope.retentionDeadline <= now) result.expired += 1;
      continue;
    }
    if (state !== envelope.state)
      await deps.envelopes.setState(
        plan.dlqArn,
        envelope.messageId,
        state,
        reason ?? (entry ? `${entry.kind} (run ${redriveId})` : undefined),
      );
    if (state === 'REDRIVEN') {
      result.redriven += 1;
      redrivenKeys.add(envelope.idempotencyKey);
    } else if (state === 'PARKED') result.parked += 1;
    else if (state === 'DISCARDED') result.discarded += 1;
    else {
      result.inDlq += 1;
      fresh.push(envelope);
    }
  }
  result.returned = fresh.filter((e) => redrivenKeys.has(e.idempotencyKey)).length;
  result.duplicateSendsPrevented = [...ledger.values()].filter((e) => e.duplicatePrevented).length;
  result.balanced =
    result.lost === 0 &&
    result.inventoried === result.redriven + result.parked + result.discarded + result.inDlq + result.lost;

  await recordRunOnIncident(deps.incidents, plan.incidentId, { reconcile: result });
  deps.metrics?.record(plan.dlqArn, {
    Inventoried: result.inventoried,
    Redriven: result.redriven,
    Parked: result.parked,
    Discarded: result.discarded,
    Missing: result.lost,
    StillInDlq: result.inDlq,
  });
  return result;
}
