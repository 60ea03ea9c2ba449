/**
 * Notify and RecordFailure: tells people how a run ended and records the outcome on the incident.
 * Both states pass the whole state document (`run`), because the slots that exist depend on where
 * the run ended (RecordFailure may run before `$.plan` exists). Only ids, counts and reasons are
 * sent: message bodies never enter the workflow.
 *
 * Every run ends here, so Notify also releases the DLQ's workflow lease (`DLQ#<dlqArn>` /
 * `WORKFLOW`, taken by Preflight) before it notifies: a conditional delete that only removes the
 * lease this execution holds, so it is idempotent (a retried Notify, RecordFailure after a failed
 * Notify) and a run refused because another run holds the lease leaves that lease alone.
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html
 */
import { type AuditTrail, auditPlanOf } from '#incident/audit-trail.js';
import {
  type Notifier,
  type RedriveOutcome,
  type RunRecorder,
  recordRunOnIncident,
  statusAfterRun,
} from '#incident/notifier.js';
import type { WorkflowLeaseStore } from '#incident/workflow-lease.js';
import { outcomeMetric, type PipelineMetric, type RunMetrics } from '#platform/metrics.js';
import { exposureBoundOf } from '#platform/reasons.js';
import { exposureBoundText } from '#platform/reasons-text.js';
import * as z from '#platform/zod.js';
import { cancelOrphanedTask, type MoveTaskRecords, type OrphanedTask } from '#transfer/move-task-record.js';
import type { MoveTasks } from '#transfer/move-tasks.js';
import { forecastText, type RampForecast } from '#transfer/redrive-plan.js';

const Slot = z.nullish(z.looseObject({}));

/** Input of the Notify function (states `Notify` and `RecordFailure`). */
export const NotifyInput = z.object({
  outcome: z.string().check(z.minLength(1, 'must name the outcome')),
  /** `$$.Execution.Name`: releases the workflow lease only if this execution holds it. Absent: the incident id. */
  executionName: z.optional(z.string().check(z.minLength(1, 'executionName must not be empty'))),
  /** `$$.Execution.StartTime` (ISO-8601): the run's duration metric. */
  startedAt: z.optional(z.string()),
  run: z.looseObject({
    input: z.nullish(z.looseObject({ incidentId: z.optional(z.string()), dlqArn: z.optional(z.unknown()) })),
    plan: z.nullish(z.looseObject({ incidentId: z.string(), dlqArn: z.string() })),
    preflight: Slot,
    recheck: Slot,
    approval: Slot,
    park: Slot,
    sample: Slot,
    verify: Slot,
    ramp: Slot,
    reconcile: Slot,
    inventory: Slot,
    error: z.nullish(z.looseObject({ Error: z.optional(z.string()), Cause: z.optional(z.string()) })),
  }),
});
export type NotifyInput = z.infer<typeof NotifyInput>;

/** `$.notification`. */
export interface NotifyResult {
  notified: boolean;
  outcome: string;
  text: string;
  /** False when there was no incident record to update (console start without triage). */
  recorded: boolean;
  /** True when this call released the DLQ's workflow lease (false: not held by this execution). */
  leaseReleased: boolean;
  /** The move task of this execution that RecordFailure found still running and cancelled. */
  orphanedTask: OrphanedTask | null;
}

/** Ports of {@link notify}. */
export interface NotifyDeps {
  notifier: Notifier;
  incidents: RunRecorder;
  /** The per-DLQ workflow lease; without it nothing is released (unit tests of the text). */
  leases?: Pick<WorkflowLeaseStore, 'release'>;
  /** The incident's audit trail: the run's end, its plan and who approved it. Absent: not recorded. */
  audit?: Pick<AuditTrail, 'record'>;
  /** Now, epoch milliseconds. @default Date.now */
  now?: () => number;
  /**
   * The move-task record and SQS move tasks: RecordFailure cancels a task this execution started
   * that is still running (nobody would supervise it). Without them nothing is cancelled.
   */
  moveTasks?: { records: Pick<MoveTaskRecords, 'get'>; tasks: Pick<MoveTasks, 'list' | 'cancel'> };
  /** The run's outcome, duration and exposure as CloudWatch metrics. Absent: none published. */
  metrics?: RunMetrics;
}

type Run = NotifyInput['run'];
type Fields = Record<string, string | number | boolean | null>;

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);

/** The message of a Step Functions `Cause` (a Lambda error is `{"errorType","errorMessage",...}` JSON). */
export function causeMessage(cause: string | undefined): string {
  if (!cause) return 'no cause given';
  try {
    const parsed = JSON.parse(cause) as { errorMessage?: unknown };
    if (typeof parsed.errorMessage === 'string') return parsed.errorMessage;
  } catch {
    // not JSON: use as is
  }
  return cause;
}

function counts(run: Run): Fields {
  const fields: Fields = {};
  const r = run.reconcile ?? {};
  for (const k of [
    'inventoried',
    'redriven',
    'parked',
    'discarded',
    'inDlq',
    'lateArrivals',
    'inFlight',
    'missing',
    'duplicateSendsPrevented',
    'possibleDuplicateSends',
  ]) {
    const v = num(r[k]);
    if (v !== null) fields[k] = v;
  }
  // Of redriven: moved outside the run (by hand, another tool) and processed by a consumer after
  // they were last seen in the DLQ, so not missing (Reconcile's evidence).
  const outside = num(r.redrivenOutside);
  if (outside !== null && outside > 0) fields.redrivenOutside = outside;
  const ramp = run.ramp ?? {};
  if (num(ramp.rate) !== null) fields.lastRate = num(ramp.rate);
  if (str(ramp.status)) fields.moveTaskStatus = str(ramp.status);
  if (str(ramp.failureReason)) fields.failureReason = str(ramp.failureReason);
  const exposure = exposureBoundOf(ramp);
  if (exposure) fields.exposureBound = exposureBoundText(exposure);
  // Moved by the move tasks: Reconcile's figure from evidence (capped by what the tasks report),
  // else the ramp's (earlier tasks of the run included). The recording mover's $.ramp is its own
  // state (it has `steps`): what it moved is `movedByMover`, never the task's.
  const byMover = num(ramp.steps) !== null;
  const rampMoved = num(ramp.moved);
  if (byMover && rampMoved !== null) fields.movedByMover = rampMoved;
  const byTask =
    num(r.movedByTask) ?? (byMover || rampMoved === null ? null : rampMoved + (num(ramp.movedBefore) ?? 0));
  if (byTask !== null) fields.movedByTask = byTask;
  // The depth of the queue the run read: an un-park run reads the parking queue, not the DLQ.
  const depth = num(run.recheck?.dlqDepth ?? run.preflight?.dlqDepth);
  if (depth !== null) fields[run.plan?.unpark === true ? 'parkingDepth' : 'dlqDepth'] = depth;
  return fields;
}

/** The sentence a person on call reads for each outcome. */
export function outcomeText(outcome: RedriveOutcome | string, run: Run): string {
  const dlq = run.plan?.dlqArn ?? (typeof run.input?.dlqArn === 'string' ? run.input.dlqArn : 'the DLQ');
  const rec = run.reconcile ?? {};
  const resent = num(rec.possibleDuplicateSends) ?? 0;
  const missing = num(rec.missing) ?? 0;
  const inFlight = num(rec.inFlight) ?? 0;
  const late = num(rec.lateArrivals) ?? 0;
  const missingIds = Array.isArray(rec.missingMessages)
    ? (rec.missingMessages as Array<{ messageId?: unknown }>)
        .slice(0, 5)
        .map((m) => String(m.messageId))
        .join(', ')
    : '';
  const returned = num(rec.returned) ?? 0;
  const outside = num(rec.redrivenOutside) ?? 0;
  const tally =
    `${num(rec.redriven) ?? 0} redriven${outside > 0 ? ` (${outside} of them outside this pipeline: moved by hand or another tool, then processed by a consumer)` : ''}, ${num(rec.parked) ?? 0} parked, ${num(rec.discarded) ?? 0} discarded, ` +
    `${num(rec.inDlq) ?? 0} still in the DLQ${inFlight > 0 ? `, ${inFlight} in flight` : ''}, ${missing} missing` +
    // Returned copies have envelopes of their own (in the DLQ or parked): say so, or the counts
    // read as more than were inventoried.
    (returned > 0
      ? ` (of ${num(rec.inventoried) ?? 0} inventoried; ${returned} of the redriven came back and are counted again where they are now)`
      : '') +
    (missing > 0
      ? ` (left the DLQ with no record: removed by hand or expired${
          missingIds
            ? rec.missingExact === false
              ? `; which ones cannot be told apart from those the move task moved, candidates: ${missingIds}`
              : `: ${missingIds}`
            : ''
        }; the counts are NOT balanced)`
      : '') +
    (late > 0 ? `; ${late} late arrival(s) included` : '') +
    (resent > 0
      ? outcome === 'failed'
        ? // Reconciled after the failure: these entries were being sent when the step failed, and a
          // restart sends them again (Reconcile's possibleDuplicates names them).
          ` (${resent} possibly sent by the step that failed, with no record that they were: a restart sends them again, so a consumer may see them twice)`
        : ` (${resent} resent after a crash: a consumer may see them twice)`
      : '');
  switch (outcome) {
    case 'completed':
      return `Redrive of ${dlq} complete: ${tally}.`;
    case 'sample-only':
      return `Sample of ${dlq} passed (${str(run.verify?.reason) ?? 'no returns'}); mode sample-only, nothing bulk-moved: ${tally}.`;
    case 'dry-run':
      return dryRunText(dlq, run);
    case 'nothing-to-redrive':
      return `${dlq} is empty: nothing to redrive.`;
    case 'refused':
      return `${str((run.recheck ?? run.preflight)?.refusal) ?? 'redrive refused'}; nothing moved.`;
    case 'rejected':
      return `Redrive of ${dlq} rejected${str(run.approval?.approvedBy) ? ` by ${str(run.approval?.approvedBy)}` : ''}${str(run.approval?.reason) ? ` (${str(run.approval?.reason)})` : ''}: nothing moved.`;
    case 'approval-expired':
      return `Approval for ${dlq} expired: approval expired, nothing moved.`;
    case 'sample-failed':
      return `Sample redrive of ${dlq} failed: ${str(run.verify?.reason) ?? 'verification failed'}. ${tally}.`;
    case 'halted':
      return `Redrive of ${dlq} halted: ${str(run.ramp?.reason) ?? 'health gate'}. ${tally}.`;
    case 'cancelled':
      return `Redrive of ${dlq} cancelled: ${str(run.ramp?.reason) ?? 'on request'}. ${tally}.`;
    case 'bulk-move-refused': {
      const inv = run.inventory ?? {};
      return `Bulk move of ${dlq} refused: the inventory is a sample of ${num(inv.inventoried) ?? 0} of about ${num(inv.depthAtStart) ?? 0} messages (the DLQ was deeper than one inventory can hold invisible), so a move task would move about ${num(inv.unseen) ?? 0} messages that have no envelope; they stay in the DLQ for a path that records each message before it moves it. Parking and the verified sample are done: ${tally}.`;
    }
    case 'failed':
      // A failure between the approval and the bulk move was reconciled first (ReconcileAfterFailure):
      // say where the messages are, parked ones included; else the counts are not known.
      return `Redrive of ${dlq} failed at a step: ${run.error?.Error ?? 'error'}: ${causeMessage(run.error?.Cause)}.${run.reconcile ? ` ${tally}.` : ''}`;
    default:
      return `Redrive of ${dlq} ended: ${outcome}.`;
  }
}

/**
 * The plan a dry run reports: what the real run of the same input would park, sample and move, its
 * ramp with the estimated wall time (Preflight's `forecast`), and every warning in full.
 */
function dryRunText(dlq: string, run: Run): string {
  const forecast = run.preflight?.forecast as RampForecast | undefined;
  const warnings = warningsOf(run);
  const plan = forecast
    ? `a redrive now would ${forecastText(forecast)}`
    : `${num(run.preflight?.dlqDepth) ?? 0} message(s) would be redriven`;
  return `Dry run for ${dlq}: preflight ok, nothing moved; ${plan}. ${warnings.length > 0 ? `Warnings: ${warnings.join('; ')}.` : 'No warnings.'}`;
}

/** The warnings of the last checks the run made (the recheck after approval, else Preflight). */
function warningsOf(run: Run): string[] {
  const checks = run.recheck ?? run.preflight;
  return Array.isArray(checks?.warnings) ? checks.warnings.filter((w) => typeof w === 'string') : [];
}

/**
 * Sends the notification and records the outcome on the incident.
 * @throws whatever the notifier or the incident store throws (the workflow retries transient ones).
 */
export async function notify(input: NotifyInput, deps: NotifyDeps): Promise<NotifyResult> {
  const { run, outcome } = input;
  const incidentId = run.plan?.incidentId ?? run.input?.incidentId ?? 'unknown';
  // No plan: the run failed in ValidateInput, before Preflight could take a lease.
  const leaseReleased =
    run.plan && deps.leases
      ? await deps.leases.release(run.plan.dlqArn, {
          incidentId: run.plan.incidentId,
          executionName: input.executionName ?? run.plan.incidentId,
        })
      : false;
  // A failed run supervises nothing any more: its running move task must not go on unwatched.
  const orphanedTask =
    outcome === 'failed' && run.plan && deps.moveTasks
      ? await cancelOrphanedTask(
          run.plan.dlqArn,
          { incidentId: run.plan.incidentId, executionName: input.executionName ?? run.plan.incidentId },
          { records: deps.moveTasks.records, moveTasks: deps.moveTasks.tasks },
        )
      : null;
  const text = `${outcomeText(outcome, run)}${orphanedTask ? ` ${orphanedTaskText(orphanedTask)}` : ''}`;
  const fields = counts(run);
  if (orphanedTask) fields.orphanedTask = orphanedTask.taskHandle;
  await deps.notifier.notify({ incidentId, kind: outcome, text, fields });
  const warnings = warningsOf(run);
  // A dry run changes nothing, the incident's record of its real runs included: its end (which
  // may be any outcome, e.g. nothing-to-redrive once the DLQ is empty) goes to `lastDryRun` only.
  const dryRun = run.plan?.mode === 'dry-run' || outcome === 'dry-run';
  const recorded =
    incidentId === 'unknown'
      ? false
      : dryRun
        ? await recordRunOnIncident(deps.incidents, incidentId, {
            lastDryRun: {
              outcome,
              outcomeText: text,
              executionName: input.executionName ?? run.plan?.incidentId,
            },
          })
        : await recordRunOnIncident(deps.incidents, incidentId, {
            status: statusAfterRun(outcome),
            outcome,
            outcomeText: text,
            // Which execution's end this is: execution-ended leaves an end Notify recorded alone.
            runEndedBy: input.executionName ?? run.plan?.incidentId,
            ...(run.ramp ? { ramp: run.ramp } : {}),
            ...exposureFields(run.ramp),
            ...(run.reconcile ? { reconcile: run.reconcile } : {}),
            ...(warnings.length > 0 ? { warnings } : {}),
          });
  if (recorded && deps.audit) await deps.audit.record(runEndedEntry(input, incidentId, text, fields, deps));
  if (run.plan && deps.metrics)
    deps.metrics.record(run.plan.dlqArn, runMetrics(input, (deps.now ?? Date.now)()));
  return { notified: true, outcome, text, recorded, leaseReleased, orphanedTask };
}

/** The run's exposure bound and its basis on the incident item, for every run that ramped. */
function exposureFields(ramp: unknown): Record<string, unknown> {
  const exposure = exposureBoundOf(ramp);
  return exposure ? { exposureBound: exposure.bound, exposureBasis: exposure.basis } : {};
}

/** Notify's metrics: one run of this outcome, its duration, the messages the ramp saw come back. */
function runMetrics(input: NotifyInput, nowMs: number): Partial<Record<PipelineMetric, number>> {
  const counter = outcomeMetric(input.outcome);
  const started = input.startedAt ? Date.parse(input.startedAt) : Number.NaN;
  const ramp = input.run.ramp ?? {};
  const exposure = (ramp.exposure ?? {}) as { returned?: unknown };
  const exposed = num(exposure.returned) ?? num(ramp.reinflow);
  return {
    ...(counter ? { [counter]: 1 } : {}),
    ...(Number.isNaN(started) ? {} : { RunDuration: Math.max(0, (nowMs - started) / 1000) }),
    ...(exposed !== null ? { Exposed: exposed } : {}),
  };
}

/** The `run-ended` audit entry: outcome, counts, the plan the run followed and who approved it. */
function runEndedEntry(
  input: NotifyInput,
  incidentId: string,
  text: string,
  fields: Fields,
  deps: NotifyDeps,
) {
  const { run, outcome } = input;
  const executionName = input.executionName ?? null;
  const approval = run.approval;
  const numeric = Object.fromEntries(
    Object.entries(fields).filter(([, v]) => typeof v === 'number'),
  ) as Record<string, number>;
  return {
    incidentId,
    entryId: `run#${executionName ?? incidentId}#ended`,
    kind: 'run-ended' as const,
    at: (deps.now ?? Date.now)(),
    by: null,
    via: 'workflow' as const,
    executionName,
    plan: run.plan ? auditPlanOf(run.plan) : null,
    outcome,
    text,
    counts: numeric,
    approval:
      approval && typeof approval.decision === 'string'
        ? { decision: approval.decision, by: str(approval.approvedBy), reason: str(approval.reason) }
        : null,
  };
}

/** What happened to a move task its run could no longer supervise. */
export function orphanedTaskText(task: OrphanedTask): string {
  return task.cancelled
    ? `Its move task ${task.taskHandle} was cancelled after moving ${task.moved} message(s): no health gate watches it any more; the rest stays in the DLQ, and Reconcile of the next run accounts for it.`
    : `Its move task ${task.taskHandle} ended on its own after moving ${task.moved} message(s).`;
}
