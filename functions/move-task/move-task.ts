/**
 * The ramped bulk redrive (states StartMoveTask, CheckProgress, StepUp; one function, `action`):
 *
 * - `start`: StartMessageMoveTask at `rampRates[0]`, DestinationArn omitted unless the plan names
 *   one (each message returns to its own DeadLetterQueueSourceArn).
 * - `check`: the health gate after each dwell. It reads ListMessageMoveTasks (every status, not only
 *   RUNNING), the DLQ depth against what the task still has to move (more means re-inflow: sampled
 *   by key to confirm that redriven messages are coming back), and the source queues' backlog.
 *   Decides `step-up`, `hold`, `done` or `halt`; a halt on re-inflow cancels the running task.
 * - `step-up`: CancelMessageMoveTask (valid only on RUNNING) then Start at the next rate: a running
 *   task's rate cannot change. While the cancelled task is still CANCELLING the restart is pending
 *   and the next `check` finishes it.
 *
 * FAILED surfaces FailureReason and ApproximateNumberOfMessagesMoved (case C06) and halts; the rest
 * stays in the DLQ. A Start refused with InvalidParameterValue because a task is active becomes a
 * halt with the refusal text, never a retry.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-configure-dead-letter-queue-redrive.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ListMessageMoveTasks.html
 */
import type { CancelRequest, CancelRequests } from '#incident/cancel-requests.js';
import { ExecutionPlan, parseSqsArn } from '#incident/execution-input.js';
import { scanDlq, type VisitResult } from '#inventory/dlq-scan.js';
import type { EnvelopeStore } from '#inventory/envelope-store.js';
import { idempotencyKeyOfMessage } from '#inventory/idempotency-key.js';
import { sleep as realSleep } from '#platform/sleep.js';
import type { SqsQueues } from '#platform/sqs-queues.js';
import * as z from '#platform/zod.js';
import { activeTask, type MoveTask, type MoveTasks } from '#transfer/move-tasks.js';
import { checkRampRates } from '#transfer/redrive-plan.js';

/** `$.ramp` (docs/contracts.md) plus the gate's measurements. */
export const RampState = z.looseObject({
  decision: z.enum(['step-up', 'hold', 'done', 'halt', 'cancelled']),
  rateIndex: z.number().check(z.int(), z.gte(0)),
  rate: z.number().check(z.int()),
  taskHandle: z.nullable(z.string()),
  status: z.nullable(z.string()),
  moved: z.number(),
  toMove: z.number(),
  failureReason: z.nullable(z.string()),
  reason: z.string(),
  dwellSeconds: z.number().check(z.int(), z.gte(0)),
  /** Rate index to start once the cancelled task has stopped (step-up in progress). */
  pendingRateIndex: z.optional(z.nullable(z.number().check(z.int()))),
  /** Messages moved by earlier tasks of this run. */
  movedBefore: z.optional(z.number()),
});
export type RampState = z.infer<typeof RampState>;

/** Input of the MoveTask function. */
export const MoveTaskInput = z.object({
  action: z.enum(['start', 'check', 'step-up']),
  plan: ExecutionPlan,
  /** `$$.Execution.Name`: whose cancel request to read. Absent: the incident id stands in. */
  executionName: z.optional(z.string().check(z.minLength(1))),
  preflight: z.looseObject({ sourceArns: z.array(z.string()) }),
  ramp: z.optional(RampState),
});
export type MoveTaskInput = z.infer<typeof MoveTaskInput>;

/** Output: the ramp slot. */
export type RampResult = z.output<typeof RampState> & {
  pendingRateIndex: number | null;
  movedBefore: number;
  reinflow: number;
  sourceBacklog: number;
};

/** Ports of {@link moveTask}. */
export interface MoveTaskDeps {
  moveTasks: MoveTasks;
  queues: Pick<SqsQueues, 'describe' | 'resolveByName' | 'receive' | 'changeVisibility'>;
  envelopes: Pick<EnvelopeStore, 'findByIdempotencyKey'>;
  /** A person's request to stop the run (Slack Cancel, `dlq cancel`); every action reads it first. */
  cancelRequests?: Pick<CancelRequests, 'get'>;
  sleep?: (ms: number) => Promise<void>;
  /** How long a step-up waits for the cancelled task to stop, milliseconds. @default 20000 */
  cancelWaitMs?: number;
  /** Source backlog above rate x dwell x this factor holds the ramp. @default 2 */
  backlogFactor?: number;
  /** Epoch milliseconds. @default Date.now */
  now?: () => number;
}

/**
 * How long before a refused Start an earlier attempt of the same step may have started the task
 * that refuses it, milliseconds: the SDK's own retries plus the state's Retry (2 + 4 + 8 + 16 s)
 * and the invocations between them.
 */
const OWN_START_WINDOW_MS = 120_000;

const MAX_DWELL = 3600;

function base(plan: ExecutionPlan, prev: RampState | undefined): RampResult {
  const rateIndex = prev?.rateIndex ?? 0;
  return {
    decision: 'hold',
    rateIndex,
    rate: plan.rampRates[rateIndex] ?? plan.rampRates[0] ?? 1,
    taskHandle: prev?.taskHandle ?? null,
    status: prev?.status ?? null,
    moved: prev?.moved ?? 0,
    toMove: prev?.toMove ?? 0,
    failureReason: null,
    reason: '',
    dwellSeconds: plan.dwellSeconds,
    pendingRateIndex: prev?.pendingRateIndex ?? null,
    movedBefore: prev?.movedBefore ?? 0,
    reinflow: 0,
    sourceBacklog: 0,
  };
}

async function dlqDepth(deps: MoveTaskDeps, plan: ExecutionPlan): Promise<number> {
  const dlq = await deps.queues.describe(plan.dlqUrl);
  return dlq.visible + dlq.inFlight;
}

async function startAt(
  plan: ExecutionPlan,
  rateIndex: number,
  deps: MoveTaskDeps,
  out: RampResult,
): Promise<RampResult> {
  const rate = plan.rampRates[rateIndex] as number;
  // Nothing left (the previous rate moved it all): a new task would only idle until SQS ends it.
  if ((await dlqDepth(deps, plan)) === 0)
    return {
      ...out,
      decision: 'done',
      rateIndex,
      rate,
      pendingRateIndex: null,
      reason: 'the DLQ is empty: nothing left to move',
    };
  const problems = checkRampRates([rate]);
  if (problems.length > 0)
    return { ...out, decision: 'halt', reason: `redrive refused: ${problems[0]?.message}` };
  const requestedAt = (deps.now ?? Date.now)();
  const started = await deps.moveTasks.start({
    sourceArn: plan.dlqArn,
    destinationArn: plan.destinationArn,
    rate,
  });
  let handle = started.ok ? started.taskHandle : null;
  let reason = `move task started at ${rate} msg/s`;
  if (!started.ok && started.code === 'TASK_ACTIVE') {
    // StartMessageMoveTask is not idempotent: a repeated Start (SDK retry after a lost response,
    // Lambda retry of this step) is refused by the task the first one started. That task is ours
    // when it has our DLQ, rate and destination and started moments ago; anything else (a console
    // redrive, C06) stays a refusal.
    const since = requestedAt - OWN_START_WINDOW_MS;
    const own = (await deps.moveTasks.list(plan.dlqArn)).find(
      (t) =>
        t.status === 'RUNNING' &&
        t.taskHandle !== null &&
        t.rate === rate &&
        (t.destinationArn ?? null) === plan.destinationArn &&
        t.startedAt !== null &&
        t.startedAt >= since,
    );
    if (own) {
      handle = own.taskHandle;
      reason = `move task started at ${rate} msg/s (task ${own.taskHandle}, started by an earlier attempt of this step)`;
    }
  }
  if (handle === null)
    return {
      ...out,
      decision: 'halt',
      reason: started.ok ? 'no task handle' : started.refusal,
      taskHandle: null,
    };
  return {
    ...out,
    decision: 'hold',
    rateIndex,
    rate,
    taskHandle: handle,
    status: 'RUNNING',
    pendingRateIndex: null,
    moved: 0,
    toMove: 0,
    reason,
  };
}

/**
 * The task this run is watching: the one with our handle, else the newest. SQS lists a handle
 * only while a task is RUNNING, so when ours is not listed it has ended (or is cancelling), and a
 * RUNNING task with another handle is someone else's (a console redrive started after ours, C06):
 * then ours is the newest task that is not RUNNING.
 */
function currentTask(tasks: readonly MoveTask[], handle: string | null): MoveTask | undefined {
  if (!handle) return tasks[0];
  return tasks.find((t) => t.taskHandle === handle) ?? tasks.find((t) => t.status !== 'RUNNING');
}

/** Counts peeked DLQ messages whose key belongs to an envelope seen earlier under another MessageId. */
async function confirmedReinflow(deps: MoveTaskDeps, plan: ExecutionPlan): Promise<number> {
  let count = 0;
  await scanDlq(
    deps.queues,
    { queueUrl: plan.dlqUrl, visibilityTimeoutSeconds: 5, maxMessages: 10, emptyReceives: 1 },
    async (batch) => {
      const results = new Map<string, VisitResult>();
      for (const message of batch) {
        results.set(message.MessageId as string, 'hold');
        const key =
          message.MessageAttributes?.['idempotency-key']?.StringValue ?? idempotencyKeyOfMessage(message).key;
        const envelopes = await deps.envelopes.findByIdempotencyKey(key);
        if (envelopes.some((e) => e.messageId !== message.MessageId)) count += 1;
      }
      return { results, stop: true };
    },
  );
  return count;
}

async function sourceBacklog(deps: MoveTaskDeps, arns: readonly string[]): Promise<number> {
  let total = 0;
  for (const arn of arns) {
    const parsed = parseSqsArn(arn);
    if (!parsed) continue;
    const info = await deps.queues.resolveByName(parsed.queueName, parsed.accountId);
    total += info.visible;
  }
  return total;
}

/**
 * Runs one ramp action.
 * @returns the ramp slot; `decision` drives the workflow's RampDecision? state.
 * @throws TransientError on throttling/5xx (CheckProgress is safe to retry).
 */
export async function moveTask(input: MoveTaskInput, deps: MoveTaskDeps): Promise<RampResult> {
  const { plan } = input;
  const sleep = deps.sleep ?? realSleep;
  const out = base(plan, input.ramp);
  const cancel = await deps.cancelRequests?.get(plan.incidentId, input.executionName ?? plan.incidentId);
  if (cancel) return cancelled(plan, deps, out, cancel);

  if (input.action === 'start') return startAt(plan, 0, deps, out);

  if (input.action === 'step-up') {
    const next = Math.min(out.rateIndex + 1, plan.rampRates.length - 1);
    if (out.taskHandle) {
      const cancelled = await deps.moveTasks.cancel(out.taskHandle);
      if (!cancelled.cancelled) return check(input, deps, out);
    }
    const waitUntil = Date.now() + (deps.cancelWaitMs ?? 20_000);
    for (;;) {
      const tasks = await deps.moveTasks.list(plan.dlqArn);
      const active = activeTask(tasks);
      if (!active) {
        const last = tasks[0];
        return startAt(plan, next, deps, {
          ...out,
          movedBefore: out.movedBefore + (last?.moved ?? out.moved),
        });
      }
      if (Date.now() >= waitUntil)
        return {
          ...out,
          decision: 'hold',
          status: active.status,
          taskHandle: null,
          pendingRateIndex: next,
          dwellSeconds: Math.min(plan.dwellSeconds, 10),
          reason: `step-up to ${plan.rampRates[next]} msg/s waits for the cancelled task (${active.status})`,
        };
      await sleep(1000);
    }
  }
  return check(input, deps, out);
}

/**
 * A person asked the run to stop: cancel the move task this run owns (if it still runs) and end
 * the ramp. Nothing else moves; Reconcile then accounts for what the task moved.
 */
async function cancelled(
  plan: ExecutionPlan,
  deps: MoveTaskDeps,
  out: RampResult,
  request: CancelRequest,
): Promise<RampResult> {
  const tasks = out.taskHandle ? await deps.moveTasks.list(plan.dlqArn) : [];
  const task = tasks.find((t) => t.taskHandle === out.taskHandle);
  if (task?.status === 'RUNNING' && out.taskHandle) await deps.moveTasks.cancel(out.taskHandle);
  const moved = task?.moved ?? out.moved;
  return {
    ...out,
    decision: 'cancelled',
    status: task ? (task.status === 'RUNNING' ? 'CANCELLING' : task.status) : out.status,
    moved,
    pendingRateIndex: null,
    reason: `cancelled by ${request.by} (${request.via}) at ${new Date(request.at).toISOString()}${request.reason ? `: ${request.reason}` : ''}; ${out.movedBefore + moved} message(s) moved before the cancel`,
  };
}

async function check(input: MoveTaskInput, deps: MoveTaskDeps, out: RampResult): Promise<RampResult> {
  const { plan } = input;
  const tasks = await deps.moveTasks.list(plan.dlqArn);
  const task = currentTask(tasks, out.taskHandle);
  if (!task) {
    return { ...out, decision: 'halt', status: null, reason: 'no move task found for this DLQ' };
  }
  const seen: RampResult = {
    ...out,
    status: task.status,
    moved: task.moved,
    toMove: task.toMove ?? out.toMove,
    taskHandle: task.taskHandle ?? out.taskHandle,
    failureReason: task.failureReason,
  };
  const total = seen.movedBefore + task.moved;
  switch (task.status) {
    case 'COMPLETED':
      if (seen.pendingRateIndex !== null) break; // an older task; the restart below handles it
      return { ...seen, decision: 'done', reason: `move task completed: ${total} message(s) moved` };
    case 'FAILED':
      return {
        ...seen,
        decision: 'halt',
        reason: `move task FAILED (${task.failureReason ?? 'no reason given'}) after moving ${task.moved} of ${task.toMove ?? '?'} message(s); the rest stays in the DLQ`,
      };
    case 'CANCELLING':
      return {
        ...seen,
        decision: 'hold',
        dwellSeconds: Math.min(plan.dwellSeconds, 10),
        reason: 'move task is cancelling',
      };
    case 'CANCELLED':
      if (seen.pendingRateIndex === null)
        return {
          ...seen,
          decision: 'halt',
          reason: `move task was cancelled outside the workflow after moving ${task.moved} message(s)`,
        };
      break;
    case 'RUNNING':
      return gate(input, deps, seen, task);
    default:
      return { ...seen, decision: 'hold', reason: `move task status ${task.status}: waiting` };
  }
  // A step-up whose cancel has finished: start at the pending rate.
  const pending = seen.pendingRateIndex as number;
  return startAt(plan, pending, deps, { ...seen, movedBefore: total });
}

async function gate(
  input: MoveTaskInput,
  deps: MoveTaskDeps,
  seen: RampResult,
  task: MoveTask,
): Promise<RampResult> {
  const { plan } = input;
  const depth = await dlqDepth(deps, plan);
  if (depth === 0)
    return {
      ...seen,
      decision: 'done',
      reason: `the DLQ is empty: ${seen.movedBefore + task.moved} message(s) moved`,
    };
  const expected = Math.max(0, (task.toMove ?? 0) - task.moved);
  const surplus = Math.max(0, depth - expected);
  const reinflow = surplus > 0 ? await confirmedReinflow(deps, plan) : 0;
  const backlog = await sourceBacklog(deps, input.preflight.sourceArns);
  const measured = { ...seen, reinflow, sourceBacklog: backlog };
  if (reinflow > 0) {
    if (task.taskHandle) await deps.moveTasks.cancel(task.taskHandle);
    return {
      ...measured,
      decision: 'halt',
      status: 'CANCELLING',
      reason: `re-inflow: the DLQ holds ${surplus} more message(s) than the task has left to move, and ${reinflow} peeked message(s) were redriven before; task cancelled after moving ${task.moved}`,
    };
  }
  const limit = seen.rate * plan.dwellSeconds * (deps.backlogFactor ?? 2);
  if (backlog > limit) {
    return {
      ...measured,
      decision: 'hold',
      reason: `source backlog ${backlog} exceeds ${limit} (rate x dwell x ${deps.backlogFactor ?? 2}): holding at ${seen.rate} msg/s`,
    };
  }
  if (seen.rateIndex < plan.rampRates.length - 1) {
    return {
      ...measured,
      decision: 'step-up',
      reason: `healthy at ${seen.rate} msg/s (${task.moved} moved, no re-inflow): stepping up to ${plan.rampRates[seen.rateIndex + 1]} msg/s`,
    };
  }
  // Top rate: dwell longer so a long backlog costs few state transitions.
  const remainingSeconds = Math.ceil(expected / Math.max(1, seen.rate));
  return {
    ...measured,
    decision: 'hold',
    dwellSeconds: Math.min(MAX_DWELL, Math.max(plan.dwellSeconds, Math.ceil(remainingSeconds / 4))),
    reason: `healthy at the top rate ${seen.rate} msg/s: ${task.moved} of ${task.toMove ?? '?'} moved`,
  };
}
