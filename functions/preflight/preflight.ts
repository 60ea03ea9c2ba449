/**
 * Preflight: decides whether a redrive plan is safe to start, before anything moves (
 * a shared DLQ), and serves `CheckDlqStillHasMessages` after the approval.
 *
 * Checks, cheapest first; the ones that need no API call run before any call:
 * 1. every ramp rate is 1..500 msg/s ("max 500 msg/s");
 * 2. a custom destination has the DLQ's queue type ("queue types differ (FIFO vs standard)"),
 *    read from the ARNs;
 * 3. the DLQ exists; its source queues (ListDeadLetterSourceQueues, plus every
 *    DeadLetterQueueSourceArn seen on its envelopes) exist and have its type;
 * 3a. every extended-client message's S3 object still exists (HeadObject): one that is gone is
 *    parked, never sampled or moved (a move task cannot skip it), and the warning names it; a
 *    bucket preflight may not read refuses (gone cannot be told from denied);
 * 3b. a DLQ with its own RedrivePolicy: the run's peeks (receive-budget.ts `runPeeks`) fit what
 *    its most-received message can still afford, else refused naming the limit and the message;
 * 4. without a destination each message returns to its own DeadLetterQueueSourceArn; with one, a
 *    DLQ shared by several sources is refused unless `allowCustomDestinationForSharedDlq`;
 *    the parking queue is neither the DLQ nor one of its source queues;
 * 5. no move task is RUNNING or CANCELLING on the DLQ ("redrive refused: task <handle> already active");
 * 6. the ramp can move the backlog before the last task hits 36 hours;
 * 6a. every queue's KMS key (the DLQ, each destination, the parking queue when messages will be
 *    parked) exists, is enabled, and may be used by each pipeline role that needs it: key policy
 *    and IAM policies, as SQS's call to KMS would be judged (key-check.ts); a denial names the
 *    queue, the key, the role and the missing action;
 * 7. no other workflow holds the DLQ's workflow lease ("another redrive of this DLQ is in progress
 *    (incident <id>, execution <name>)"): once every other check passes, Preflight (and the
 *    recheck) takes the lease `DLQ#<dlqArn>` / `WORKFLOW` with a conditional write, re-acquiring
 *    (and extending) a lease its own execution already holds. Dry-run mode moves nothing and takes
 *    no lease, but is refused where the lease would refuse the real run. An empty DLQ (dlqDepth 0) takes none either:
 *    the run ends at once. Notify / RecordFailure release it (functions/shared/incident/workflow-lease.ts);
 * and reports the verification window, which is also each redriven message's return window
 * (destination DelaySeconds + visibility timeout x maxReceiveCount + margin)
 * and the retention headroom (earliest envelope deadline - now).
 *
 * A dry run (`mode: 'dry-run'`) makes every check the real run of the same input makes and refuses
 * with the same sentence, with the same warnings; it only takes no lease. On success the result
 * carries the `forecast`: parked, sampled, moved, the ramp steps and the estimated wall time.
 *
 * Refusals are data (`ok: false`), never throws, so the workflow notifies and ends cleanly.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_StartMessageMoveTask.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ListDeadLetterSourceQueues.html
 */

import { type AuditTrail, auditPlanOf } from '#incident/audit-trail.js';
import { ExecutionPlan, parseSqsArn } from '#incident/execution-plan.js';
import type { IncidentStore } from '#incident/incident-store.js';
import type { OpenIncidents } from '#incident/open-incident.js';
import {
  leaseRefusal,
  leaseSeconds,
  type WorkflowLease,
  type WorkflowLeaseStore,
} from '#incident/workflow-lease.js';
import { type EnvelopeListing, PREFLIGHT_FIELDS } from '#inventory/envelope-listing.js';
import type { EnvelopeStore } from '#inventory/envelope-store.js';
import type { InventoryCoverageRead } from '#inventory/inventory-session.js';
import type { Envelope, QueueRegistration } from '#inventory/model.js';
import {
  checkPayloadPointers,
  type PayloadObjects,
  type PointerEnvelope,
} from '#inventory/payload-objects.js';
import { describeBudget, receiveBudget, runPeeks } from '#inventory/receive-budget.js';
import type { KeyUser } from '#platform/config.js';
import { QueueNotFoundError, RecordNotFoundError } from '#platform/errors.js';
import { sleep } from '#platform/sleep.js';
import { type QueueInfo, queueDepth, type SqsQueues } from '#platform/sqs-queues.js';
import * as z from '#platform/zod.js';
import type { Newcomers } from '#transfer/late-arrivals.js';
import { type MoveTaskRecords, recordedTask } from '#transfer/move-task-record.js';
import { activeTask, activeTaskRefusal, type MoveTasks } from '#transfer/move-tasks.js';
import { kindOfArn } from '#transfer/mover-targets.js';
import { sampleCopyProblem } from '#transfer/outgoing-copy.js';
import {
  checkQueueTypes,
  checkRampCapacity,
  checkRampRates,
  forecastRun,
  MAX_MOVE_TASK_RATE,
  parkReason,
  type RampForecast,
  verifyWindowSeconds,
} from '#transfer/redrive-plan.js';
import { needsPayload } from '#transfer/selection.js';
import { checkQueueKeys, type KeyedQueue } from './key-check.js';
import type { KeyAccess } from './kms-keys.js';
import {
  DEFAULT_ORIGIN_RETURN_WINDOW_SECONDS,
  moverReasons,
  moverRefusals,
  outsideDlqScope,
  type SelectionCount,
  SelectionCounter,
  type TransferPath,
} from './mover-path.js';

/** Input of the Preflight function (states `Preflight` and `CheckDlqStillHasMessages`). */
export const PreflightInput = z.object({
  action: z._default(z.enum(['preflight', 'recheck']), 'preflight'),
  plan: ExecutionPlan,
  /**
   * `$$.Execution.Name`: with the incident id, the holder of the workflow lease. Absent on a direct
   * invocation: the incident id stands in for it.
   */
  executionName: z.optional(z.string().check(z.minLength(1, 'executionName must not be empty'))),
});
export type PreflightInput = z.infer<typeof PreflightInput>;

/** `$.preflight` / `$.recheck` (docs/contracts.md). Times are epoch milliseconds, durations seconds. */
export interface PreflightResult {
  ok: boolean;
  refusal: string | null;
  /**
   * Visible + in-flight messages of the queue the run reads (the ASL's NothingToRedrive choice):
   * the DLQ, or the parking queue when un-parking (`parkingDepth` names it so).
   */
  dlqDepth: number;
  /** Un-park only: visible + in-flight messages in the parking queue (the queue the run reads). */
  parkingDepth?: number;
  /** Queues the messages go back to (the destination when one is given). */
  sourceArns: string[];
  fifo: boolean;
  verifyWindowSeconds: number;
  earliestRetentionDeadline: number | null;
  retentionHeadroomSeconds: number | null;
  activeMoveTask: string | null;
  /**
   * The recheck: messages that reached the DLQ after triage (no envelope) and were inventoried and
   * classified now, so Park keeps their poison out of the bulk move. 0 for Preflight.
   */
  lateArrivals: number;
  /**
   * Envelopes of the DLQ still IN_DLQ in the store. With `dlqDepth: 0` they left the DLQ after the
   * last reconcile (a run that died after starting a move task, whose task then emptied the DLQ):
   * the workflow reconciles them before it ends `NothingToRedrive`, never reports over them.
   */
  unsettled: number;
  warnings: string[];
  /**
   * What the run would do (parked, sampled, moved, the ramp steps and the estimated wall time),
   * when the checks passed; what a dry run reports. Absent on a refusal.
   */
  forecast?: RampForecast;
  /** Which engine moves the messages: the move task, or the recording mover (mover-path.ts). */
  path: TransferPath;
  /** False when the run leaves poison where it is (selective, un-park, edit): Park is skipped. */
  parkFirst: boolean;
  /** Mover runs: what the plan selects, of the messages it looks at ("N of M", by cause). */
  selection?: SelectionCount;
}

/** Ports of {@link preflight}. */
export interface PreflightDeps {
  queues: Pick<SqsQueues, 'describe' | 'resolveByName' | 'listDeadLetterSourceQueues'>;
  moveTasks: Pick<MoveTasks, 'list'>;
  envelopes: Pick<EnvelopeStore, 'listEnvelopes' | 'markPayloadGone'>;
  /**
   * The envelope listing with projections (envelope-listing.ts): only {@link PREFLIGHT_FIELDS} come
   * back (and the body when the selection has body conditions). The handler always passes it.
   * @default `envelopes.listEnvelopes` (full envelopes)
   */
  listing?: EnvelopeListing;
  /**
   * The per-DLQ workflow lease (check 7). The handler always passes it; without it check 7 is
   * skipped (tests of checks 1-6 only).
   */
  leases?: Pick<WorkflowLeaseStore, 'acquire' | 'get'>;
  /**
   * KMS and IAM (check 6a), with the pipeline roles that use queue keys (`PIPELINE_KEY_USERS`).
   * The handler always passes them; without them check 6a is skipped.
   */
  keys?: { access: KeyAccess; users: readonly KeyUser[] };
  /**
   * The recheck's inventory of messages first seen now (late-arrivals.ts `inventoryNewcomers`).
   * Without it the recheck does not look for late arrivals (StartMoveTask still does).
   */
  newcomers?: (plan: ExecutionPlan) => Promise<Newcomers>;
  /**
   * S3 (check 3a): whether extended-client payload objects still exist. The handler always passes
   * it; without it check 3a is skipped.
   */
  payloads?: PayloadObjects;
  /** Records the run's incident as the DLQ's open incident once the lease is taken. */
  openIncidents?: Pick<OpenIncidents, 'open'>;
  /**
   * The incident records: a run that takes the lease sets its incident's status back to
   * `WORKFLOW_STARTED` (a new run of an incident no longer shows the previous run's end).
   * Absent: the status is left as it was.
   */
  incidents?: Pick<IncidentStore, 'updateIncident'>;
  /**
   * The incident's audit trail: a pre-approved run's approval (no person asked: the registration's
   * policy allowed it) is recorded there once Preflight passed. Absent: not recorded.
   */
  audit?: Pick<AuditTrail, 'record'>;
  /**
   * The DLQ's move-task record (check 5): an active task it attributes to another execution is the
   * pipeline's own, outliving a failed run while RecordFailure or the execution-ended function
   * cancels it. Without it every active task refuses at once.
   */
  moveTaskRecords?: Pick<MoveTaskRecords, 'get'>;
  /** @default platform/sleep.ts */
  sleep?: (ms: number) => Promise<void>;
  /** The queue registration (access roles, registered origin) for mover runs. @default none: no roles */
  registrations?: { getRegistration(dlqArn: string): Promise<QueueRegistration> };
  /**
   * The plan's inventory session (`plan.inventoryId`, inventory-session.ts): an inventory that is a
   * sample (the DLQ was deeper than it could hold) takes the recording mover, so the messages it
   * did not see leave the DLQ only once each is recorded. Without it every inventory counts as
   * complete.
   */
  inventories?: { get(dlqArn: string, inventoryId: string): Promise<InventoryCoverageRead | undefined> };
  /** Epoch milliseconds. */
  now: () => number;
}

const shortName = (arn: string) => arn.split(':').pop() ?? arn;

/** How long check 5 waits for the pipeline's own orphaned move task to end, milliseconds. */
export const ORPHAN_TASK_WAIT_MS = 30_000;

function refused(reason: string, partial: Partial<PreflightResult> = {}): PreflightResult {
  return {
    ok: false,
    refusal: reason.startsWith('redrive refused') ? reason : `redrive refused: ${reason}`,
    dlqDepth: 0,
    sourceArns: [],
    fifo: false,
    verifyWindowSeconds: 0,
    earliestRetentionDeadline: null,
    retentionHeadroomSeconds: null,
    activeMoveTask: null,
    lateArrivals: 0,
    unsettled: 0,
    warnings: [],
    path: 'move-task',
    parkFirst: true,
    ...partial,
  };
}

async function describeArn(deps: PreflightDeps, arn: string): Promise<QueueInfo | undefined> {
  const parsed = parseSqsArn(arn);
  if (!parsed) return undefined;
  try {
    return await deps.queues.resolveByName(parsed.queueName, parsed.accountId);
  } catch (error) {
    if (error instanceof QueueNotFoundError) return undefined;
    throw error;
  }
}

/**
 * Runs the preflight checks for a plan.
 *
 * @param input - `{ action, plan }`; `recheck` runs the same checks after the approval.
 * @returns the preflight slot; `ok: false` with `refusal` when the redrive must not start.
 * @throws TransientError on throttling/5xx (retried by the workflow); AccessDeniedError.
 */
export async function preflight(input: PreflightInput, deps: PreflightDeps): Promise<PreflightResult> {
  const { plan } = input;
  const warnings: string[] = [];
  // Read only where plan.parkingQueueUrl is set.
  const parkingQueue = parkingQueueDescriber(deps, plan.parkingQueueUrl ?? '');

  // 1-2: no API call yet.
  const rateProblems = checkRampRates(plan.rampRates);
  if (rateProblems.length > 0) return refused(rateProblems.map((p) => p.message).join('; '));
  if (plan.destinationArn) {
    const mismatch = checkQueueTypes(plan.dlqArn, [plan.destinationArn]);
    if (mismatch) return refused(mismatch.message);
  }

  // 3: the DLQ and its sources.
  let dlq: QueueInfo;
  try {
    dlq = await deps.queues.describe(plan.dlqUrl);
  } catch (error) {
    if (error instanceof QueueNotFoundError) return refused(`queue not found: ${plan.dlqArn}`);
    throw error;
  }
  const dlqDepth = queueDepth(dlq);
  // Every receive of this run (inventory, park, sample, verify, progress peeks, reconcile) counts
  // toward the DLQ's own maxReceiveCount: SQS may pass messages on while the run scans them.
  if (dlq.redrivePolicy)
    warnings.push(
      `${shortName(plan.dlqArn)} has its own RedrivePolicy (maxReceiveCount ${dlq.redrivePolicy.maxReceiveCount} to ${shortName(dlq.redrivePolicy.deadLetterTargetArn)}): each scan of this run counts as a receive, so messages can move on to that queue and show up as missing`,
    );
  const sourceUrls = await deps.queues.listDeadLetterSourceQueues(plan.dlqUrl);
  // Parked poison must not land where a consumer reads it, nor stay in the DLQ.
  if (
    plan.parkingQueueUrl !== null &&
    (sourceUrls.includes(plan.parkingQueueUrl) || plan.parkingQueueUrl === plan.dlqUrl)
  )
    return refused(
      `the parking queue ${plan.parkingQueueUrl} is ${plan.parkingQueueUrl === plan.dlqUrl ? 'the DLQ itself' : 'a source queue of this DLQ: parked poison would go back to its consumer'}; register another parkingQueueArn`,
      { dlqDepth },
    );
  const sources = new Map<string, QueueInfo>();
  for (const url of sourceUrls) {
    const info = await deps.queues.describe(url);
    sources.set(info.arn, info);
  }

  // Envelopes: where the messages came from, and the earliest retention deadline.
  const envelopeSources = new Map<string, number>();
  let unknownOrigin = 0;
  let earliest: number | null = null;
  let toPark = 0;
  let inDlq = 0;
  const pointers: PointerEnvelope[] = [];
  /** Messages the sample may draw from: checked against their destination's size once it is known. */
  const redrivable: Array<
    Pick<Envelope, 'messageId' | 'sourceArn' | 'messageAttributes' | 'bodyBytes' | 'idempotencyKey'>
  > = [];
  const receiveCounts: Array<Pick<Envelope, 'messageId' | 'receiveCount' | 'state'>> = [];
  /** Messages Park will move to the parking queue: checked against its MaximumMessageSize. */
  const parkTargets: Array<ParkCopyFields> = [];
  let nonSqsOrigins = 0;
  const counter = new SelectionCounter(plan);
  const listing: EnvelopeListing = deps.listing ?? deps.envelopes;
  // The body only for a selection's body conditions (SelectionCounter); nothing else reads it here.
  const fields = needsPayload(plan.selection)
    ? [...PREFLIGHT_FIELDS, 'inlineBody' as const]
    : PREFLIGHT_FIELDS;
  for await (const envelope of listing.listEnvelopes(plan.dlqArn, fields)) {
    counter.add(envelope);
    if (envelope.state !== 'IN_DLQ') continue;
    inDlq += 1;
    receiveCounts.push({
      messageId: envelope.messageId,
      receiveCount: envelope.receiveCount,
      state: envelope.state,
    });
    if (envelope.origin && envelope.origin.kind !== 'sqs') nonSqsOrigins += 1;
    // A pointer is checked again on every run (its object may be back): its old mark decides nothing here.
    const { classification, redriveCount, sourceArn, origin } = envelope;
    if (parkReason({ classification, redriveCount, sourceArn, ...(origin ? { origin } : {}) }, plan)) {
      toPark += 1;
      const { messageId, messageAttributes, bodyBytes, idempotencyKey } = envelope;
      parkTargets.push({ messageId, messageAttributes, bodyBytes, idempotencyKey });
    } else {
      const { messageId, messageAttributes, bodyBytes, idempotencyKey } = envelope;
      redrivable.push({ messageId, sourceArn, messageAttributes, bodyBytes, idempotencyKey });
      if (envelope.payload)
        pointers.push({
          messageId: envelope.messageId,
          payload: envelope.payload,
          goneAt: envelope.payloadGoneAt,
        });
    }
    if (envelope.sourceArn === 'unknown') unknownOrigin += 1;
    else envelopeSources.set(envelope.sourceArn, (envelopeSources.get(envelope.sourceArn) ?? 0) + 1);
    if (earliest === null || envelope.retentionDeadline < earliest) earliest = envelope.retentionDeadline;
  }
  for (const arn of envelopeSources.keys()) {
    if (sources.has(arn)) continue;
    const info = await describeArn(deps, arn);
    if (!info && !plan.destinationArn)
      return refused(
        `source queue ${arn} no longer exists: ${envelopeSources.get(arn)} message(s) would fail the move task (AWS.SimpleQueueService.NonExistentQueue); give a destinationArn or recreate the queue`,
        { dlqDepth },
      );
    if (info) {
      sources.set(info.arn, info);
      warnings.push(
        `${shortName(arn)} sent messages to this DLQ but no longer names it in its RedrivePolicy`,
      );
    }
  }
  // 3a: extended-client messages whose S3 object is gone are parked, never redriven.
  if (deps.payloads && pointers.length > 0) {
    const checked = await checkPayloadPointers(
      plan.dlqArn,
      pointers,
      deps.payloads,
      deps.envelopes,
      deps.now(),
      plan.mode !== 'dry-run',
    );
    if (checked.refusal) return refused(checked.refusal, { dlqDepth });
    toPark += checked.gone;
    warnings.push(...checked.warnings);
  }
  // 3b: a DLQ with its own RedrivePolicy: the run's peeks must fit what its messages can afford.
  const budget = receiveBudget(dlq, receiveCounts);
  if (budget) {
    const peeks = runPeeks({
      toPark,
      sampleSize: plan.sampleSize,
      rampSteps: plan.rampRates.length,
      sampleOnly: plan.mode === 'sample-only',
    });
    const said = `${describeBudget(dlq.name, budget)}; this run peeks up to ${peeks.total} time(s) (${peeks.steps})`;
    if (peeks.total > budget.peeksLeft)
      return refused(
        `${said}: it could move messages to the next DLQ; raise the DLQ's maxReceiveCount (or remove its RedrivePolicy) for the redrive`,
        { dlqDepth },
      );
    warnings.push(said);
  }
  const session = plan.inventoryId ? await deps.inventories?.get(plan.dlqArn, plan.inventoryId) : undefined;
  // FIFO: what a move task (after Park) would reorder goes through the mover, group by group.
  const reasons = moverReasons(
    plan,
    nonSqsOrigins,
    dlq.fifo ? { doNotRedrive: toPark, unseen: Math.max(0, dlqDepth - inDlq) } : undefined,
    session,
  );
  if (reasons.length > 0)
    return moverPreflight(input, deps, {
      dlq,
      dlqDepth,
      counter,
      reasons,
      toPark,
      earliest,
      warnings,
      inDlq,
      parkTargets,
    });
  // A move task moves a FIFO DLQ's messages without keeping their group order.
  if (dlq.fifo) warnings.push(FIFO_ORDER_NOT_KEPT);
  const allSources = [...sources.keys()];
  // A move task cannot skip messages: do-not-redrive messages leave the DLQ first. A dry run
  // makes every check the real run makes, and refuses where it would refuse.
  if (toPark > 0) {
    if (!plan.parkingQueueUrl && !plan.discardPoison)
      return refused(
        `${toPark} message(s) must not be redriven (poison, permanent, over maxRedrives, without a source or with a gone extended-client payload) and a move task cannot skip them; configure a parking queue (registration parkingQueueArn or PARKING_QUEUE_URL) or set discardPoison`,
        { dlqDepth },
      );
    const tooLarge = plan.discardPoison ? null : await parkingSizeRefusal(parkingQueue, plan, parkTargets);
    if (tooLarge) return refused(tooLarge, { dlqDepth });
    warnings.push(
      plan.discardPoison
        ? `${toPark} do-not-redrive message(s) will be deleted before the bulk move (discardPoison), each recorded as DISCARDED`
        : `${toPark} do-not-redrive message(s) will be moved to the parking queue before the bulk move (a move task cannot skip messages)`,
    );
  }
  if (unknownOrigin > 0) {
    warnings.push(
      plan.destinationArn
        ? `${unknownOrigin} message(s) have no DeadLetterQueueSourceArn (sent straight to the DLQ); they go to ${shortName(plan.destinationArn)}`
        : `${unknownOrigin} message(s) have no DeadLetterQueueSourceArn (sent straight to the DLQ); Park moves them out of the DLQ first`,
    );
  }

  // 4: where the messages go.
  let targets: QueueInfo[];
  if (plan.destinationArn) {
    const destination = await describeArn(deps, plan.destinationArn);
    if (!destination) return refused(`queue not found: ${plan.destinationArn}`, { dlqDepth });
    const others = allSources.filter((arn) => arn !== plan.destinationArn);
    if (others.length > 0 && !plan.allowCustomDestinationForSharedDlq) {
      const list = others.map(shortName).join(', ');
      return refused(
        allSources.includes(plan.destinationArn)
          ? `this DLQ is shared: ${list} messages would be delivered to ${shortName(plan.destinationArn)}; omit destinationArn (each message returns to its own source) or set allowCustomDestinationForSharedDlq`
          : `${shortName(plan.destinationArn)} is not a source queue of this DLQ: ${list || 'its'} messages would be delivered there; set allowCustomDestinationForSharedDlq to confirm`,
        { dlqDepth },
      );
    }
    targets = [destination];
  } else {
    if (allSources.length === 0)
      return refused(
        `${shortName(plan.dlqArn)} is not the DLQ of any queue (ListDeadLetterSourceQueues is empty and no envelope names a source)`,
        { dlqDepth },
      );
    targets = [...sources.values()];
  }
  const mismatch = checkQueueTypes(
    plan.dlqArn,
    targets.map((t) => t.arn),
  );
  if (mismatch) return refused(mismatch.message, { dlqDepth });
  const unsampleable = unsampleableWarning(redrivable, targets, plan);
  if (unsampleable) warnings.push(unsampleable);

  // 5: one active move task per source ARN. The pipeline's own task that outlived a failed run
  // (the record names another execution) is being cancelled: wait for it to end, within
  // ORPHAN_TASK_WAIT_MS, so this run goes on and reconciles what it moved (issue 9 item 4).
  let active = activeTask(await deps.moveTasks.list(plan.dlqArn));
  const record = active ? await deps.moveTaskRecords?.get(plan.dlqArn) : undefined;
  const orphan =
    active && record && record.executionName !== (input.executionName ?? plan.incidentId)
      ? recordedTask(record, [active])
      : undefined;
  for (const until = deps.now() + ORPHAN_TASK_WAIT_MS; orphan && active && deps.now() < until; ) {
    await (deps.sleep ?? sleep)(2000);
    active = activeTask(await deps.moveTasks.list(plan.dlqArn));
  }
  if (active) {
    const own =
      orphan && record
        ? `; it is the pipeline's own task of run ${record.executionName} (incident ${record.incidentId}), still ${active.status.toLowerCase()} after ${ORPHAN_TASK_WAIT_MS / 1000} s: start again once it has ended`
        : '';
    return refused(`${activeTaskRefusal(active)}${own}`, {
      dlqDepth,
      activeMoveTask: active.taskHandle ?? active.status,
    });
  }

  // 6: the 36-hour limit of one move task (a dry run plans a redrive).
  if (plan.mode !== 'sample-only') {
    const tooSlow = checkRampCapacity(dlqDepth, plan.rampRates, plan.dwellSeconds);
    if (tooSlow) return refused(tooSlow.message, { dlqDepth });
  }

  // 6a: the queues' KMS keys.
  if (deps.keys) {
    const parkingRequired = toPark > 0 && !plan.discardPoison;
    const keyed: KeyedQueue[] = [
      { queue: dlq, class: 'dlq', required: true },
      ...targets.map((queue): KeyedQueue => ({ queue, class: 'destination', required: true })),
    ];
    if (plan.parkingQueueUrl) {
      try {
        const parking = await parkingQueue();
        keyed.push({ queue: parking, class: 'parking', required: parkingRequired });
      } catch (error) {
        if (!(error instanceof QueueNotFoundError)) throw error;
        if (parkingRequired) return refused(`parking queue not found: ${plan.parkingQueueUrl}`, { dlqDepth });
        warnings.push(`parking queue not found: ${plan.parkingQueueUrl}`);
      }
    }
    const checked = await checkQueueKeys(keyed, deps.keys.users, deps.keys.access);
    warnings.push(...checked.warnings);
    if (checked.problems.length > 0) return refused(checked.problems.join('; '), { dlqDepth, warnings });
  }

  const windowSources = targets.map((t) => ({
    visibilityTimeoutSeconds: t.visibilityTimeoutSeconds,
    maxReceiveCount: t.redrivePolicy?.maxReceiveCount ?? 1,
    delaySeconds: t.delaySeconds,
  }));
  const window = verifyWindowSeconds(windowSources, plan.verifyMarginSeconds);
  const now = deps.now();
  const headroom = earliest === null ? null : Math.floor((earliest - now) / 1000);
  if (headroom !== null) {
    const top = Math.min(plan.rampRates.at(-1) ?? 1, MAX_MOVE_TASK_RATE);
    const needed = window + Math.ceil(dlqDepth / top);
    if (headroom < needed)
      warnings.push(
        `retention: the earliest message expires in ${headroom} s, before the sample window and the move (about ${needed} s) complete`,
      );
  }

  // After the approval (which can take an hour), messages that dead-lettered since triage have no
  // envelope: the alarm does not fire again while it is in ALARM. Inventory and classify
  // them now, so Park takes their poison out; one that cannot be seen refuses the run.
  let lateArrivals = 0;
  if (input.action === 'recheck' && plan.mode !== 'dry-run' && deps.newcomers && dlqDepth > inDlq) {
    const found = await deps.newcomers(plan);
    if (found.partial)
      return refused(
        `${dlqDepth - inDlq} message(s) reached the DLQ after triage and ${found.partialReason}: they cannot all be classified, so poison among them could reach the bulk move; start the redrive again`,
        { dlqDepth, warnings },
      );
    lateArrivals = found.late.length + found.returned.length;
    // 3a for them: the newcomers' inventory HeadObjected their pointers (late-arrivals.ts).
    if (found.payloadRefusal) return refused(found.payloadRefusal, { dlqDepth, warnings });
    warnings.push(...found.warnings);
    if (lateArrivals > 0)
      warnings.push(
        `${lateArrivals} message(s) reached the DLQ after triage: inventoried and classified now (${found.toPark} to park before the bulk move)`,
      );
  }

  const leaseRefused = await takeLease(input, deps, { depth: dlqDepth, window, now });
  if (leaseRefused) return refused(leaseRefused, { dlqDepth, warnings });

  return {
    ok: true,
    refusal: null,
    dlqDepth,
    sourceArns: targets.map((t) => t.arn),
    fifo: dlq.fifo,
    verifyWindowSeconds: window,
    earliestRetentionDeadline: earliest,
    retentionHeadroomSeconds: headroom,
    activeMoveTask: null,
    lateArrivals,
    unsettled: inDlq,
    warnings,
    path: 'move-task',
    parkFirst: true,
    forecast: forecastRun({
      depth: dlqDepth,
      toPark,
      parkTo: plan.discardPoison ? 'discard' : 'parking-queue',
      sampleSize: plan.sampleSize,
      rampRates: plan.rampRates,
      dwellSeconds: plan.dwellSeconds,
      verifyWindowSeconds: window,
      sampleOnly: plan.mode === 'sample-only',
    }),
  };
}

/**
 * The parking queue's attributes (GetQueueAttributes), asked for once per Preflight run however
 * many checks read them (the size check, the KMS check); a refusal such as QueueNotFoundError is
 * kept and thrown to each.
 */
type ParkingQueueDescriber = () => Promise<QueueInfo>;

function parkingQueueDescriber(deps: PreflightDeps, parkingQueueUrl: string): ParkingQueueDescriber {
  let described: Promise<QueueInfo> | undefined;
  return () => {
    described ??= deps.queues.describe(parkingQueueUrl);
    return described;
  };
}

/** What the size of a message's parked copy is computed from (the envelope's stored fields). */
type ParkCopyFields = Pick<Envelope, 'messageId' | 'messageAttributes' | 'bodyBytes' | 'idempotencyKey'>;

/** How many messages {@link unsampleableWarning} names. */
const UNSAMPLEABLE_NAMED = 10;

/**
 * The refusal when messages Park must move are larger than the parking queue's MaximumMessageSize
 *: Park would park the others and then refuse, after the approval, with those left in the
 * DLQ for the move task to carry back to their source; refused here, nothing moves. A parking queue
 * that does not exist is left to the KMS check (6a) and Park, which name it.
 *
 * @returns the refusal naming the messages (at most {@link UNSAMPLEABLE_NAMED}), or null.
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SetQueueAttributes.html
 */
async function parkingSizeRefusal(
  parkingQueue: ParkingQueueDescriber,
  plan: ExecutionPlan,
  parkTargets: ReadonlyArray<ParkCopyFields>,
): Promise<string | null> {
  if (!plan.parkingQueueUrl || parkTargets.length === 0) return null;
  let limit: number;
  try {
    limit = (await parkingQueue()).maximumMessageSize;
  } catch (error) {
    if (error instanceof QueueNotFoundError) return null;
    throw error;
  }
  const ids = parkTargets
    .filter((e) => sampleCopyProblem(e, plan.incidentId, limit, 'park') === 'too-large')
    .map((e) => e.messageId);
  if (ids.length === 0) return null;
  const which = `${ids.slice(0, UNSAMPLEABLE_NAMED).join(', ')}${ids.length > UNSAMPLEABLE_NAMED ? `, ... (${ids.length - UNSAMPLEABLE_NAMED} more)` : ''}`;
  return `${ids.length} message(s) to park are larger than the parking queue's MaximumMessageSize (${limit} bytes) and would stay in the DLQ, where a move task would carry them back to their source: ${which}; raise the parking queue's MaximumMessageSize or set discardPoison`;
}

/**
 * The warning for messages the sample cannot copy: their attributes leave no room for
 * the pipeline's three (SQS allows 10), or the copy with them exceeds the destination's
 * MaximumMessageSize. SampleRedrive draws the sample from the others; the move task still
 * carries these, unchanged and unsampled, so the approval and the report say how many and which.
 *
 * @returns the warning, or null when the sample can copy every message.
 */
function unsampleableWarning(
  redrivable: ReadonlyArray<
    Pick<Envelope, 'messageId' | 'sourceArn' | 'messageAttributes' | 'bodyBytes' | 'idempotencyKey'>
  >,
  targets: readonly QueueInfo[],
  plan: ExecutionPlan,
): string | null {
  const limitOf = (sourceArn: string) =>
    (plan.destinationArn ? targets[0] : targets.find((t) => t.arn === sourceArn))?.maximumMessageSize;
  const found = { 'no-room': [] as string[], 'too-large': [] as string[] };
  for (const e of redrivable) {
    const limit = limitOf(e.sourceArn);
    const problem = limit === undefined ? null : sampleCopyProblem(e, plan.incidentId, limit);
    if (problem) found[problem].push(e.messageId);
  }
  const ids = [...found['no-room'], ...found['too-large']];
  if (ids.length === 0) return null;
  const why = [
    found['no-room'].length > 0
      ? `${found['no-room'].length} with no room for the pipeline's 3 attributes (SQS allows 10 per message)`
      : '',
    found['too-large'].length > 0
      ? `${found['too-large'].length} larger than the destination's MaximumMessageSize with them`
      : '',
  ]
    .filter(Boolean)
    .join(', ');
  const which = `${ids.slice(0, UNSAMPLEABLE_NAMED).join(', ')}${ids.length > UNSAMPLEABLE_NAMED ? `, ... (${ids.length - UNSAMPLEABLE_NAMED} more)` : ''}`;
  const sample =
    ids.length >= redrivable.length
      ? 'no message can be sampled, so the sample verifies nothing'
      : 'the sample is drawn from the others';
  return `${ids.length} message(s) cannot be copied by the sample (${why}): ${sample}, and the move task carries them unsampled and unchanged: ${which}`;
}

/**
 * Sets the incident's status to `WORKFLOW_STARTED` as its run starts (the end of the run writes
 * CLOSED, STOPPED or FAILED). An incident with no record (a console start of a DLQ triage never
 * saw) is left alone.
 */
async function markRunStarted(deps: PreflightDeps, incidentId: string, now: number): Promise<void> {
  try {
    await deps.incidents?.updateIncident(incidentId, {
      status: 'WORKFLOW_STARTED',
      updatedAt: new Date(now).toISOString(),
    });
  } catch (error) {
    if (!(error instanceof RecordNotFoundError)) throw error;
  }
}

/**
 * Check 7, one workflow per DLQ (taken last, so a run refused for any other reason holds
 * nothing): the refusal, or null when the lease is held (or not needed). A dry run is refused
 * where the real run would be, with the same sentence; a taken lease opens the run's incident as
 * the DLQ's open incident (a console restart that names no incident continues it).
 */
async function takeLease(
  input: PreflightInput,
  deps: PreflightDeps,
  at: { depth: number; window: number; now: number },
): Promise<string | null> {
  const { plan } = input;
  const holder = { incidentId: plan.incidentId, executionName: input.executionName ?? plan.incidentId };
  if (!deps.leases) return null; // no lease port: checks 1-6 only
  if (plan.mode === 'dry-run') {
    const held = await liveLeaseHolder(input, deps, at.now);
    return held ? leaseRefusal(held) : null;
  }
  if (at.depth === 0) return null;
  const lease = await deps.leases.acquire(plan.dlqArn, holder, at.now, leaseSeconds(at.window));
  if (!lease.acquired) return leaseRefusal(lease.heldBy);
  await deps.openIncidents?.open(plan.dlqArn, plan.incidentId, at.now);
  if (input.action === 'preflight') await markRunStarted(deps, plan.incidentId, at.now);
  // The run goes on to RecordPreApproval: no approval is requested, so the audit says who and why.
  if (plan.preApproved && input.action === 'preflight' && deps.audit)
    await deps.audit.record({
      incidentId: plan.incidentId,
      entryId: `run#${holder.executionName}#pre-approved`,
      kind: 'approved',
      at: at.now,
      by: plan.approvedBy,
      via: 'console',
      executionName: holder.executionName,
      plan: auditPlanOf(plan),
      text: `approved by policy, no approval requested: pre-approved start (approvedBy ${plan.approvedBy ?? '-'}), allowed by the queue registration (${PRE_APPROVAL_POLICY})`,
    });
  return null;
}

/** The live lease of another execution on the DLQ, if any (read only: nothing is taken). */
async function liveLeaseHolder(
  input: PreflightInput,
  deps: PreflightDeps,
  now: number,
): Promise<WorkflowLease | undefined> {
  const held = await deps.leases?.get(input.plan.dlqArn);
  const self = input.executionName ?? input.plan.incidentId;
  return held && held.expiresAt > Math.floor(now / 1000) && held.executionName !== self ? held : undefined;
}

/** The move-task path of a FIFO DLQ: the move task does not keep group order. */
export const FIFO_ORDER_NOT_KEPT =
  'FIFO: redriven messages interleave with new traffic; order within a group is not preserved';
/** The recording mover's path of a FIFO DLQ: each group moves in order (docs/redrive-workflow.md, "Deep FIFO groups"). */
export const FIFO_ORDER_KEPT =
  'FIFO: order within each message group is kept: the recording mover moves each group in order and holds a group in the DLQ from its first message that may not move (messages sent to the source queue meanwhile are not ordered against the redriven ones)';

/** The registration setting that lets a console start arrive approved (ValidateInput checks it). */
export const PRE_APPROVAL_POLICY = 'allowPreApproved: true';

/**
 * The recording mover's preflight (mover-path.ts): the selection counted ("N of M"), refusals by
 * name (nothing selected, a target elsewhere without a registered role, no target, un-park
 * without a parking queue, an active move task), SQS targets that exist and have the DLQ's type,
 * the return window (SQS targets as for a move task; a non-SQS origin its registered
 * `returnWindowSeconds`, default {@link DEFAULT_ORIGIN_RETURN_WINDOW_SECONDS}), and the lease.
 * `dlqDepth` is the depth of the queue the run reads: the parking queue when un-parking.
 */
async function moverPreflight(
  input: PreflightInput,
  deps: PreflightDeps,
  seen: {
    dlq: QueueInfo;
    dlqDepth: number;
    counter: SelectionCounter;
    reasons: string[];
    toPark: number;
    earliest: number | null;
    warnings: string[];
    inDlq: number;
    /** Messages Park will move to the parking queue when the run parks first. */
    parkTargets: ReadonlyArray<ParkCopyFields>;
  },
): Promise<PreflightResult> {
  const { plan } = input;
  const { counter, warnings } = seen;
  const base = {
    path: 'mover' as const,
    parkFirst: false,
    selection: counter.count,
    dlqDepth: seen.dlqDepth,
  };
  const registration = deps.registrations ? await deps.registrations.getRegistration(plan.dlqArn) : {};
  const refusals = moverRefusals(plan, counter, registration);
  if (refusals.length > 0) {
    // A run in progress holds the DLQ (an un-park run has already taken the parked messages it
    // selects, so a second one selects none): the refusal names that run, as the lease would.
    const heldBy = await liveLeaseHolder(input, deps, deps.now());
    return refused(heldBy ? leaseRefusal(heldBy) : refusals.join('; '), base);
  }
  const active = activeTask(await deps.moveTasks.list(plan.dlqArn));
  if (active)
    return refused(activeTaskRefusal(active), {
      ...base,
      activeMoveTask: active.taskHandle ?? active.status,
    });

  const sqsTargets: QueueInfo[] = [];
  // A queue in another account or Region is reached only through its registered role, which only
  // the mover assumes (the stack grants sts:AssumeRole to the mover alone): Preflight checks its
  // type from the ARN; the mover's first step resolves it with the role (URL, MaximumMessageSize)
  // and fails by name when it is not there.
  const throughRole: string[] = [];
  for (const arn of counter.targets.keys()) {
    if (kindOfArn(arn) !== 'sqs') continue;
    if (outsideDlqScope(arn, plan.dlqArn)) {
      throughRole.push(arn);
      continue;
    }
    const info = await describeArn(deps, arn);
    if (!info) return refused(`queue not found: ${arn}`, base);
    sqsTargets.push(info);
  }
  const mismatch = checkQueueTypes(plan.dlqArn, [...sqsTargets.map((t) => t.arn), ...throughRole]);
  if (mismatch) return refused(mismatch.message, base);
  for (const arn of throughRole)
    warnings.push(
      `${arn} is reached through the registered role of its account and Region: the mover resolves it at its first send (Preflight holds no role to describe it)`,
    );

  const sqsWindow = verifyWindowSeconds(
    sqsTargets.map((t) => ({
      visibilityTimeoutSeconds: t.visibilityTimeoutSeconds,
      maxReceiveCount: t.redrivePolicy?.maxReceiveCount ?? 1,
      delaySeconds: t.delaySeconds,
    })),
    plan.verifyMarginSeconds,
  );
  const originWindow = [...counter.targets.keys()].some((arn) => kindOfArn(arn) !== 'sqs')
    ? ((registration as Partial<QueueRegistration>).origin?.returnWindowSeconds ??
        DEFAULT_ORIGIN_RETURN_WINDOW_SECONDS) + plan.verifyMarginSeconds
    : 0;
  const window = Math.max(sqsWindow, originWindow);

  // A full redrive of a non-SQS DLQ parks its poison first, as a move-task run does; a selective,
  // un-park or edit run leaves everything it does not select where it is.
  // FIFO parks nothing: a do-not-redrive message holds its group in the DLQ, in order (a parked
  // head would let the rest of its group overtake it, and SendMessage to the parking queue drops
  // DeadLetterQueueSourceArn).
  const fullRun = !plan.selection && !plan.unpark && !plan.transform;
  const parkFirst =
    fullRun && !seen.dlq.fifo && seen.toPark > 0 && (plan.parkingQueueUrl !== null || plan.discardPoison);
  // Park would park the others and then refuse, after the approval, as on the move-task path.
  if (parkFirst && !plan.discardPoison) {
    const tooLarge = await parkingSizeRefusal(
      parkingQueueDescriber(deps, plan.parkingQueueUrl ?? ''),
      plan,
      seen.parkTargets,
    );
    if (tooLarge) return refused(tooLarge, base);
  }
  if (seen.dlq.fifo && seen.toPark > 0 && !plan.unpark)
    warnings.push(
      `FIFO: ${seen.toPark} do-not-redrive message(s) stay in the DLQ, each with every later message of its message group, in order: nothing is parked${plan.discardPoison ? ' or discarded (discardPoison does not apply to FIFO groups)' : ''}; the run report names the held groups`,
    );
  else if (fullRun && seen.toPark > 0 && !parkFirst)
    warnings.push(
      `${seen.toPark} do-not-redrive message(s) stay in the DLQ (no parking queue): the mover skips them`,
    );
  if (seen.dlq.fifo) warnings.push(FIFO_ORDER_KEPT);
  const { selected, total } = counter.count;
  warnings.push(
    `the recording mover moves this run (${seen.reasons.join(', ')}): ${selected} of ${total} message(s) selected`,
  );

  let depth = seen.dlqDepth;
  if (plan.unpark && plan.parkingQueueUrl)
    depth = queueDepth(await deps.queues.describe(plan.parkingQueueUrl));
  const parking = plan.unpark ? { parkingDepth: depth } : {};
  const now = deps.now();
  const leaseRefused = await takeLease(input, deps, { depth, window, now });
  if (leaseRefused) return refused(leaseRefused, { ...base, dlqDepth: depth, ...parking, warnings });
  return {
    ok: true,
    refusal: null,
    dlqDepth: depth,
    ...parking,
    sourceArns: [...counter.targets.keys()],
    fifo: seen.dlq.fifo,
    verifyWindowSeconds: window,
    earliestRetentionDeadline: seen.earliest,
    retentionHeadroomSeconds: seen.earliest === null ? null : Math.floor((seen.earliest - now) / 1000),
    activeMoveTask: null,
    lateArrivals: 0,
    unsettled: seen.inDlq,
    warnings,
    path: 'mover',
    parkFirst,
    selection: counter.count,
  };
}
