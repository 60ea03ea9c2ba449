/**
 * ExecutionEnded: releases the DLQ's workflow lease (`DLQ#<dlqArn>` / `WORKFLOW`) of a redrive
 * execution that ended ABORTED, TIMED_OUT or FAILED without Notify/RecordFailure releasing it
 * (an operator stopped it in the console, it timed out, or RecordFailure itself failed), so the
 * DLQ is not blocked until the lease expires (~49 h).
 *
 * Input: the EventBridge "Step Functions Execution Status Change" event. The lease is found from
 * the execution input's `dlqArn` (`detail.input`, a JSON string). When the input is not in the
 * event (`detail.input` null or absent: Step Functions leaves it out when it is too large), the
 * lease cannot be looked up by execution name (its key holds only the dlqArn), so the execution
 * name is read as an incident id (triage names executions `executionNameOf(incidentId)`, the id
 * itself for every id triage makes) and the incident's `dlqArn` is used; with no such incident
 * nothing is released and the notice says how to unblock the DLQ by hand.
 *
 * The lease is released only if THIS execution (by name) holds it: read, then the conditional
 * delete of workflow-lease.ts, which also re-checks the holder, so another run's lease is never
 * deleted. FAILED is also how refused, halted and failed runs end after Notify/RecordFailure ran:
 * for those the lease is already gone and only a log line is written (no second notice); a notice
 * is sent for every ABORTED and TIMED_OUT run and for a FAILED run whose lease this released.
 *
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/cw-events.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html
 */

import type { Incident, IncidentStatus, IncidentStore } from '#incident/incident-store.js';
import { type NoticeKind, type Notifier, recordRunOnIncident, statusAfterRun } from '#incident/notifier.js';
import type { WorkflowLeaseStore } from '#incident/workflow-lease.js';
import { InvalidInputError } from '#platform/errors.js';
import { logger } from '#platform/middleware.js';
import * as z from '#platform/zod.js';
import { cancelOrphanedTask, type MoveTaskRecords, type OrphanedTask } from '#transfer/move-task-record.js';
import type { MoveTasks } from '#transfer/move-tasks.js';

/** Execution statuses that end a run; the infra rule routes exactly these. */
export const ENDED_STATUSES = ['ABORTED', 'TIMED_OUT', 'FAILED'] as const;
export type EndedStatus = (typeof ENDED_STATUSES)[number];

/** The notice kind this function sends (docs/contracts.md "Stores", notifier kinds). */
export const EXECUTION_ENDED_KIND: NoticeKind = 'execution-ended';

/**
 * The EventBridge event (fields this function reads; others are allowed). `detail.input` is the
 * execution input as a JSON string, null or absent when Step Functions leaves it out.
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/cw-events.html
 */
export const ExecutionStatusChangeEvent = z.looseObject({
  source: z.literal('aws.states', { error: 'must be "aws.states"' }),
  'detail-type': z.literal('Step Functions Execution Status Change', {
    error: 'must be "Step Functions Execution Status Change"',
  }),
  detail: z.looseObject({
    executionArn: z
      .string({ error: 'must be the execution ARN' })
      .check(z.regex(/^arn:[^:]+:states:[^:]*:[^:]*:execution:/, 'must be the execution ARN')),
    name: z
      .string({ error: 'must be the execution name' })
      .check(z.minLength(1, 'must be the execution name')),
    status: z.enum(ENDED_STATUSES, { error: `must be one of ${ENDED_STATUSES.join(', ')}` }),
    input: z.nullish(z.string({ error: 'must be the execution input as a JSON string, or null' })),
    error: z.nullish(z.string()),
  }),
});
export type ExecutionStatusChangeEvent = z.infer<typeof ExecutionStatusChangeEvent>;

/** Ports of {@link executionEnded}. */
export interface ExecutionEndedDeps {
  leases: Pick<WorkflowLeaseStore, 'get' | 'release'>;
  /**
   * Finds the DLQ when the event carries no input (execution name = incident id), and records the
   * run's end on the incident when Notify did not.
   */
  incidents: Pick<IncidentStore, 'getIncident' | 'updateIncident'>;
  notifier: Notifier;
  /** Cancels a move task the ended execution started that still runs unsupervised. Absent: none. */
  moveTasks?: { records: Pick<MoveTaskRecords, 'get'>; tasks: Pick<MoveTasks, 'list' | 'cancel'> };
}

/** What the function did. */
export interface ExecutionEndedResult {
  executionName: string;
  status: EndedStatus;
  /** The DLQ whose lease was looked at; null when it could not be found. */
  dlqArn: string | null;
  /** Where `dlqArn` came from. */
  dlqFrom: 'input' | 'incident' | 'none';
  /** True when this call deleted the lease (this execution held it). */
  leaseReleased: boolean;
  /** The execution that holds the lease now, if another one does. */
  heldBy: string | null;
  /** False when only a log line was written (a FAILED run whose lease was already released). */
  notified: boolean;
  text: string;
  /** The move task the execution started that was still running, now cancelled. */
  orphanedTask: OrphanedTask | null;
  /**
   * The status this call wrote on the incident (`FAILED`, `STOPPED` for ABORTED), or null when
   * Notify had already recorded this execution's end, or there is no incident.
   */
  incidentStatus: IncidentStatus | null;
}

/** The execution input as an object, or null when the event does not carry it. */
function executionInput(raw: string | null | undefined): Record<string, unknown> | null {
  if (raw === null || raw === undefined) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new InvalidInputError('invalid execution status change event', [
      'detail.input: must be the execution input as a JSON object string, or null',
    ]);
  }
  return parsed as Record<string, unknown>;
}

/**
 * Releases the ended execution's workflow lease (only if it holds it) and tells people.
 *
 * @param event - the parsed status change event ({@link ExecutionStatusChangeEvent}).
 * @throws InvalidInputError when `detail.input` is present but not a JSON object (nothing written).
 * @throws whatever the lease store, incident store or notifier throw (EventBridge retries the invoke).
 */
export async function executionEnded(
  event: ExecutionStatusChangeEvent,
  deps: ExecutionEndedDeps,
): Promise<ExecutionEndedResult> {
  const { name, status, executionArn } = event.detail;
  const input = executionInput(event.detail.input);

  let dlqArn: string | null = null;
  let dlqFrom: ExecutionEndedResult['dlqFrom'] = 'none';
  let incidentId = typeof input?.incidentId === 'string' ? input.incidentId : name;
  if (input !== null) {
    if (typeof input.dlqArn === 'string' && input.dlqArn.length > 0) {
      dlqArn = input.dlqArn;
      dlqFrom = 'input';
    }
  } else {
    const incident = await deps.incidents.getIncident(name);
    if (incident !== undefined && (incident.executionArn ?? executionArn) === executionArn) {
      dlqArn = incident.dlqArn;
      dlqFrom = 'incident';
      incidentId = incident.incidentId;
    }
  }

  let leaseReleased = false;
  let heldBy: string | null = null;
  if (dlqArn !== null) {
    const lease = await deps.leases.get(dlqArn);
    if (lease !== undefined && lease.executionName === name) {
      incidentId = lease.incidentId;
      leaseReleased = await deps.leases.release(dlqArn, {
        incidentId: lease.incidentId,
        executionName: name,
      });
    }
    if (!leaseReleased) {
      const now = lease?.executionName === name ? await deps.leases.get(dlqArn) : lease;
      heldBy = now !== undefined && now.executionName !== name ? now.executionName : null;
    }
  }

  // Nobody supervises a move task of an ended execution: cancel it (only the one its record names).
  const orphanedTask =
    dlqArn !== null && deps.moveTasks
      ? await cancelOrphanedTask(
          dlqArn,
          { incidentId, executionName: name },
          { records: deps.moveTasks.records, moveTasks: deps.moveTasks.tasks },
        )
      : null;
  const text = `${endedText({ name, status, dlqArn, input, leaseReleased, heldBy })}${
    orphanedTask?.cancelled
      ? ` Its move task ${orphanedTask.taskHandle} was still running with no health gate watching it: cancelled after moving ${orphanedTask.moved} message(s).`
      : ''
  }`;
  const fields = {
    executionName: name,
    status,
    dlqArn,
    leaseReleased,
    heldBy,
    error: event.detail.error ?? null,
  };
  const incidentStatus = await recordEnd(deps.incidents, incidentId, name, status, text);
  const notified = status !== 'FAILED' || leaseReleased || orphanedTask !== null;
  if (notified) await deps.notifier.notify({ incidentId, kind: EXECUTION_ENDED_KIND, text, fields });
  else logger.info(text, { incidentId, kind: EXECUTION_ENDED_KIND, fields });
  return {
    executionName: name,
    status,
    dlqArn,
    dlqFrom,
    leaseReleased,
    heldBy,
    notified,
    text,
    orphanedTask,
    incidentStatus,
  };
}

/**
 * Records the end of a run Notify did not see end (a crash, a timeout, a StopExecution): the
 * incident's status `FAILED` (FAILED, TIMED_OUT) or `STOPPED` (ABORTED), with the outcome and the
 * sentence. An end Notify recorded for this execution (`runEndedBy`) is left as it is.
 *
 * @returns the status written, or null when nothing was written.
 */
async function recordEnd(
  incidents: ExecutionEndedDeps['incidents'],
  incidentId: string,
  executionName: string,
  status: EndedStatus,
  text: string,
): Promise<IncidentStatus | null> {
  const incident = (await incidents.getIncident(incidentId)) as
    | (Incident & { runEndedBy?: unknown })
    | undefined;
  if (incident === undefined || incident.runEndedBy === executionName) return null;
  const outcome = status === 'ABORTED' ? 'cancelled' : 'failed';
  const written = statusAfterRun(outcome) ?? null;
  const recorded = await recordRunOnIncident(incidents, incidentId, {
    status: written,
    outcome,
    outcomeText: text,
    runEndedBy: executionName,
  });
  return recorded ? written : null;
}

/** The sentence a person on call reads. */
export function endedText(r: {
  name: string;
  status: EndedStatus;
  dlqArn: string | null;
  input: Record<string, unknown> | null;
  leaseReleased: boolean;
  heldBy: string | null;
}): string {
  const head = `Redrive execution ${r.name} ended ${r.status}`;
  if (r.dlqArn === null) {
    return r.input !== null
      ? `${head}; its input names no dlqArn, so it never took a workflow lease.`
      : `${head}; its input is not in the event and no incident is named ${r.name}, so its DLQ is unknown and no workflow lease was released. If a DLQ stays blocked, delete its DLQ#<dlqArn> / WORKFLOW item once its executionName is ${r.name}, or wait for expiresAt.`;
  }
  if (r.leaseReleased) {
    return `${head} before Notify; released its workflow lease on ${r.dlqArn}: the DLQ can be redriven again.`;
  }
  if (r.heldBy !== null) {
    return `${head}; the workflow lease on ${r.dlqArn} is held by execution ${r.heldBy}, left as is.`;
  }
  return `${head}; it held no workflow lease on ${r.dlqArn} (already released, or never taken).`;
}
