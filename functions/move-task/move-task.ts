/**
 * The ramped bulk redrive (states StartMoveTask, CheckProgress, StepUp, ResumeRamp; one function,
 * `action`), with a health gate that works by accounting, not by peeking (DESIGN.md "Direction").
 *
 * **The plan's expectation.** `baseline` is what the ramp must move: the DLQ depth (visible + in
 * flight + delayed) when the first task starts, plus late arrivals the gate accepted. After each
 * dwell the DLQ should hold `baseline - moved` (moved: the tasks' ApproximateNumberOfMessagesMoved,
 * summed over the run's tasks). More than that (`excess`) is re-inflow (redriven messages failing
 * again and coming back behind the backlog, where no peek reaches) or late arrivals (messages that
 * dead-lettered after triage, case N02): both stop the ramp. The task is cancelled (a step-up is a
 * cancel-and-restart point anyway) and the DLQ is inventoried (late-arrivals.ts): a newcomer whose
 * key belongs to a message of this run that left the DLQ is re-inflow, and the run halts, naming
 * the source queue it came back from and the exposure; the other newcomers are late arrivals, now
 * with envelopes and a classification: their poison is parked (`decision: 'park'`, the ASL runs
 * Park then ResumeRamp) and the ramp goes on from where it was.
 *
 * **The return window.** A moved message that fails again comes back within the destination's
 * DelaySeconds + visibility timeout x maxReceiveCount + margin (`preflight.verifyWindowSeconds`).
 * So a consumer that breaks at any moment is seen at the first check after one return window, at
 * most one dwell plus one return window after the break, and at most rate x (return window +
 * dwell) messages reach it meanwhile. When everything is moved (task COMPLETED, or the DLQ empty)
 * the ramp holds for one return window and checks the accounting once more before `done`.
 *
 * **Ownership by record** (move-task-record.ts): before StartMessageMoveTask the step records its
 * intent, after it the handle. A retried step adopts only the recorded handle, or, after a crash
 * between the call and the record, the single task that started after the intent with the same
 * rate and destination. Any other task is someone else's (a console redrive, C06): the run is
 * refused and the refusal names it (`decision: 'refuse'`); the pipeline never cancels it.
 *
 * **Bounded.** Every gate check counts toward {@link MAX_GATE_CHECKS}, derived from Step
 * Functions' 25,000-event history limit; at the bound the task is cancelled and the run halts
 * (then Reconcile and Notify run), and the top-rate dwell grows only as far as the remaining
 * checks require (case N04).
 *
 * FAILED surfaces FailureReason and ApproximateNumberOfMessagesMoved (case C06) and halts.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-configure-dead-letter-queue-redrive.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ListMessageMoveTasks.html
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html (25,000 history events)
 */
import type { CancelRequest, CancelRequests } from '#incident/cancel-requests.js';
import { ExecutionPlan, parseSqsArn } from '#incident/execution-plan.js';
import type { EnvelopeStore } from '#inventory/envelope-store.js';
import { sleep as realSleep } from '#platform/sleep.js';
import { queueDepth, type SqsQueues } from '#platform/sqs-queues.js';
import * as z from '#platform/zod.js';
import { countBySource, type Newcomers } from '#transfer/late-arrivals.js';
import {
  cancelOrphanedTask,
  isOwnIntent,
  type MoveTaskOwner,
  type MoveTaskRecords,
} from '#transfer/move-task-record.js';
import { activeTask, type MoveTask, type MoveTasks } from '#transfer/move-tasks.js';
import { checkRampRates } from '#transfer/redrive-plan.js';

/** What the gate decided; the ASL's RampDecision? state routes on it. */
export const RAMP_DECISIONS = ['step-up', 'hold', 'done', 'halt', 'park', 'refuse', 'cancelled'] as const;

/** `$.ramp` (docs/contracts.md) plus the gate's measurements. */
export const RampState = z.looseObject({
  decision: z.enum(RAMP_DECISIONS),
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
  /** Messages the ramp must move (DLQ depth at the first start + accepted late arrivals). */
  baseline: z.optional(z.nullable(z.number().check(z.int(), z.gte(0)))),
  returnWindowSeconds: z.optional(z.number().check(z.gte(0))),
  /** Epoch ms: everything is moved; `done` once the return window has passed. */
  drainUntil: z.optional(z.nullable(z.number())),
  /** Gate checks so far (bounded by MAX_GATE_CHECKS). */
  checks: z.optional(z.number().check(z.int(), z.gte(0))),
  /** Moved total at the last check that found no excess. */
  cleanMoved: z.optional(z.number()),
  lateArrivals: z.optional(z.number().check(z.int(), z.gte(0))),
  /** The task was cancelled to inventory the DLQ and is still stopping. */
  examinePending: z.optional(z.boolean()),
  /** Starts of this run so far (the `seq` of the last one). */
  starts: z.optional(z.number().check(z.int(), z.gte(0))),
  /** When the current task was asked for, epoch ms (identifies it once SQS stops listing its handle). */
  taskRequestedAt: z.optional(z.nullable(z.number())),
  /** Restarts for messages a completed task left behind (held by another receiver at its start). */
  leftoverRestarts: z.optional(z.number().check(z.int(), z.gte(0))),
});
export type RampState = z.infer<typeof RampState>;

/** Input of the MoveTask function. */
export const MoveTaskInput = z.object({
  action: z.enum(['start', 'check', 'step-up', 'resume', 'stop']),
  plan: ExecutionPlan,
  preflight: z.looseObject({
    sourceArns: z.array(z.string()),
    /** The return window of a redriven message, seconds (Preflight's verification window). */
    verifyWindowSeconds: z.optional(z.number().check(z.gte(0))),
  }),
  ramp: z.optional(RampState),
  /** `$$.Execution.Name`: with the incident, the owner of the tasks this run starts. */
  executionName: z.optional(z.string().check(z.minLength(1))),
});
export type MoveTaskInput = z.infer<typeof MoveTaskInput>;

/** Output: the ramp slot, every field set (it is the next step's `ramp` input). */
export type RampResult = RampState & {
  decision: (typeof RAMP_DECISIONS)[number];
  rateIndex: number;
  rate: number;
  taskHandle: string | null;
  status: string | null;
  /** Moved by the current task. */
  moved: number;
  toMove: number;
  failureReason: string | null;
  reason: string;
  dwellSeconds: number;
  pendingRateIndex: number | null;
  movedBefore: number;
  baseline: number | null;
  returnWindowSeconds: number;
  drainUntil: number | null;
  checks: number;
  cleanMoved: number;
  lateArrivals: number;
  examinePending: boolean;
  starts: number;
  taskRequestedAt: number | null;
  leftoverRestarts: number;
  /** DLQ depth (visible + in flight + delayed) at this step, or null when not measured. */
  depth: number | null;
  /** depth - (baseline - moved so far); above 0 is re-inflow or late arrival. */
  excess: number;
  /** Messages of this run found back in the DLQ. */
  reinflow: number;
  /** Re-inflow by the source queue it came back from. */
  reinflowBySource: Record<string, number>;
  /** Back in the DLQ, and moved since the last clean check (may still come back). */
  exposure: { returned: number; atRisk: number };
  sourceBacklog: number;
};

/** Ports of {@link moveTask}. */
export interface MoveTaskDeps {
  moveTasks: MoveTasks;
  records: MoveTaskRecords;
  queues: Pick<SqsQueues, 'describe' | 'resolveByName'>;
  envelopes: Pick<EnvelopeStore, 'countEnvelopes'>;
  /** Inventories the DLQ and sorts what it first sees now (late-arrivals.ts `inventoryNewcomers`). */
  newcomers: (plan: ExecutionPlan) => Promise<Newcomers>;
  /** A person's request to stop the run (Slack Cancel, `dlq cancel`); every action reads it first. */
  cancelRequests?: Pick<CancelRequests, 'get'>;
  sleep?: (ms: number) => Promise<void>;
  /** How long a step waits for a cancelled task to stop, milliseconds. @default 20000 */
  cancelWaitMs?: number;
  /** Source backlog above rate x dwell x this factor holds the ramp. @default 2 */
  backlogFactor?: number;
  /** Most gate checks per execution. @default MAX_GATE_CHECKS */
  maxChecks?: number;
  /** Epoch milliseconds. @default Date.now */
  now?: () => number;
}

/**
 * Most gate checks one execution makes. Step Functions ends a Standard execution at 25,000 history
 * events, uncatchably (N04). A gate loop is Dwell (Wait: 2 events), CheckProgress (Task: 5) and
 * RampDecision? (Choice: 2); a step-up adds StepUp (5) and a Choice (2): 16 at most. 1,500 loops
 * are 24,000 events at that worst, leaving 1,000 for the states before and after the ramp, retries
 * and late-arrival parking.
 */
export const MAX_GATE_CHECKS = 1500;
/** Checks kept in reserve when sizing the top-rate dwell from the remaining budget. */
const RESERVED_CHECKS = 20;
/** Longest dwell, seconds. */
const MAX_DWELL = 3600;
/** Allowed difference between the Lambda's clock and SQS's StartedTimestamp, milliseconds. */
const START_SKEW_MS = 2000;
/** How long a task just started may be missing from ListMessageMoveTasks, milliseconds. */
const TASK_LISTING_GRACE_MS = 60_000;
/** Restarts for messages a completed task did not move (they were in flight at its start). */
const MAX_LEFTOVER_RESTARTS = 3;

type Ctx = { input: MoveTaskInput; deps: MoveTaskDeps; owner: MoveTaskOwner; now: () => number };

function base(input: MoveTaskInput): RampResult {
  const { plan } = input;
  const prev = input.ramp;
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
    baseline: prev?.baseline ?? null,
    returnWindowSeconds:
      input.preflight.verifyWindowSeconds ?? prev?.returnWindowSeconds ?? plan.verifyMarginSeconds,
    drainUntil: prev?.drainUntil ?? null,
    checks: prev?.checks ?? 0,
    cleanMoved: prev?.cleanMoved ?? 0,
    lateArrivals: prev?.lateArrivals ?? 0,
    examinePending: prev?.examinePending ?? false,
    starts: prev?.starts ?? 0,
    taskRequestedAt: prev?.taskRequestedAt ?? null,
    leftoverRestarts: prev?.leftoverRestarts ?? 0,
    depth: null,
    excess: 0,
    reinflow: 0,
    reinflowBySource: {},
    exposure: { returned: 0, atRisk: 0 },
    sourceBacklog: 0,
  };
}

const shortName = (arn: string) => arn.split(':').pop() ?? arn;
const total = (r: RampResult) => r.movedBefore + r.moved;

async function dlqDepth(ctx: Ctx): Promise<number> {
  return queueDepth(await ctx.deps.queues.describe(ctx.input.plan.dlqUrl));
}

async function sourceBacklog(deps: MoveTaskDeps, arns: readonly string[]): Promise<number> {
  let sum = 0;
  for (const arn of arns) {
    const parsed = parseSqsArn(arn);
    if (!parsed) continue;
    sum += (await deps.queues.resolveByName(parsed.queueName, parsed.accountId)).visible;
  }
  return sum;
}

/** The run's current task: by handle while SQS lists it (RUNNING), else the newest that started after our intent. */
function ourTask(tasks: readonly MoveTask[], out: RampResult): MoveTask | undefined {
  if (out.taskHandle) {
    const byHandle = tasks.find((t) => t.taskHandle === out.taskHandle);
    if (byHandle) return byHandle;
  }
  const since = (out.taskRequestedAt ?? Number.NEGATIVE_INFINITY) - START_SKEW_MS;
  return tasks.find((t) => t.status !== 'RUNNING' && t.startedAt !== null && t.startedAt >= since);
}

/** The sentence that names a task the pipeline did not start. */
function foreignTask(task: MoveTask): string {
  const started = task.startedAt !== null ? new Date(task.startedAt).toISOString() : 'an unknown time';
  return `redrive refused: move task ${task.taskHandle ?? `(${task.status.toLowerCase()})`} on this DLQ was not started by this run (${task.rate ?? '?'} msg/s, started ${started}, ${task.moved} moved); the pipeline leaves it alone: let it finish or cancel it, then start the redrive again`;
}

/** Folds the current task's moved count into `movedBefore`: no task is current any more. */
function fold(out: RampResult, moved: number): RampResult {
  return { ...out, movedBefore: out.movedBefore + moved, moved: 0, taskHandle: null };
}

/**
 * Runs one ramp action.
 * @returns the ramp slot; `decision` drives the workflow's RampDecision? state.
 * @throws TransientError on throttling/5xx (every action is safe to retry: starts are owned by record).
 */
export async function moveTask(input: MoveTaskInput, deps: MoveTaskDeps): Promise<RampResult> {
  const ctx: Ctx = {
    input,
    deps,
    owner: { incidentId: input.plan.incidentId, executionName: input.executionName ?? input.plan.incidentId },
    now: deps.now ?? Date.now,
  };
  const out = base(input);
  if (input.action === 'stop') return stopAfterFailure(ctx, out);
  const cancel = await deps.cancelRequests?.get(input.plan.incidentId, ctx.owner.executionName);
  if (cancel) return cancelled(ctx, out, cancel);
  if (input.action === 'start') return first(ctx, out);
  // A retry of a step that already asked for the next task: adopt it (or start it), never a second one.
  const record = await deps.records.get(input.plan.dlqArn);
  if (record && isOwnIntent(record, ctx.owner, out.starts + 1)) {
    const tasks = await deps.moveTasks.list(input.plan.dlqArn);
    const previous = out.taskHandle || out.taskRequestedAt ? ourTask(tasks, out) : undefined;
    const folded = previous && previous.status !== 'RUNNING' ? fold(out, previous.moved) : out;
    return launch(ctx, folded, record.rateIndex);
  }
  if (input.action === 'resume') return restart(ctx, out, out.rateIndex);
  if (input.action === 'step-up') return stepUp(ctx, out);
  return check(ctx, out);
}

/**
 * A person asked the run to stop: cancel the move task this run owns (if it still runs) and end
 * the ramp with `cancelled`, naming who asked and how many messages moved before.
 */
async function cancelled(ctx: Ctx, out: RampResult, request: CancelRequest): Promise<RampResult> {
  const { plan } = ctx.input;
  const tasks = out.taskHandle ? await ctx.deps.moveTasks.list(plan.dlqArn) : [];
  const task = tasks.find((t) => t.taskHandle === out.taskHandle);
  if (task?.status === 'RUNNING' && out.taskHandle) await ctx.deps.moveTasks.cancel(out.taskHandle);
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

/**
 * StopRampAfterFailure (`action: 'stop'`): a step of the ramp failed, so no health gate watches the
 * run's move task any more. Cancels the task the run's record attributes to this run, if it still
 * runs (a task someone else started is left alone), and waits (bounded by `cancelWaitMs`) until it
 * has stopped, so that ReconcileAfterFailure counts what it moved and nothing moves after the
 * report. `decision: 'halt'`, the reason says what was done; `status` is the task's last status.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CancelMessageMoveTask.html
 */
async function stopAfterFailure(ctx: Ctx, out: RampResult): Promise<RampResult> {
  const { deps } = ctx;
  const { plan } = ctx.input;
  const orphan = await cancelOrphanedTask(plan.dlqArn, ctx.owner, deps);
  if (!orphan)
    return { ...out, decision: 'halt', reason: 'a ramp step failed; no move task of this run was running' };
  const sleep = deps.sleep ?? realSleep;
  const waitMs = deps.cancelWaitMs ?? 20_000;
  const waitUntil = ctx.now() + waitMs;
  for (;;) {
    const task = (await deps.moveTasks.list(plan.dlqArn)).find((t) => t.taskHandle === orphan.taskHandle);
    const stopping = task?.status === 'RUNNING' || task?.status === 'CANCELLING';
    if (!stopping || ctx.now() >= waitUntil) {
      const moved = task?.moved ?? orphan.moved;
      return {
        ...out,
        decision: 'halt',
        taskHandle: orphan.taskHandle,
        status: task?.status ?? 'CANCELLED',
        moved,
        reason: `a ramp step failed: its move task ${orphan.taskHandle} was ${orphan.cancelled ? 'cancelled' : 'no longer running'} after ${moved} message(s) moved${stopping ? ` and had not stopped within ${Math.round(waitMs / 1000)} s (${task?.status})` : ''}`,
      };
    }
    await sleep(1000);
  }
}

/** StartMoveTask: late arrivals since Park first, then the first task at `rampRates[0]`. */
async function first(ctx: Ctx, out: RampResult): Promise<RampResult> {
  const depth = await dlqDepth(ctx);
  if (depth === 0)
    return {
      ...out,
      depth,
      decision: 'done',
      reason: 'the DLQ is empty after park and sample: nothing to move',
    };
  const inDlq = await ctx.deps.envelopes.countEnvelopes(ctx.input.plan.dlqArn, 'IN_DLQ');
  if (depth > inDlq)
    return examine(
      ctx,
      { ...out, depth, excess: depth - inDlq },
      `the DLQ holds ${depth} message(s) but only ${inDlq} envelope(s) are IN_DLQ`,
    );
  return launch(ctx, { ...out, depth, baseline: depth }, 0);
}

/** A later start (step-up, resume): the accounting first, so re-inflow never hides in a new baseline. */
async function restart(ctx: Ctx, out: RampResult, rateIndex: number): Promise<RampResult> {
  const depth = await dlqDepth(ctx);
  const baseline = out.baseline ?? depth + out.movedBefore;
  const excess = depth - (baseline - out.movedBefore);
  const measured = { ...out, depth, excess, baseline };
  if (excess > 0)
    return examine(
      ctx,
      { ...measured, rateIndex },
      `the DLQ holds ${depth} message(s), ${excess} more than the ${baseline - out.movedBefore} the plan has left to move`,
    );
  if (depth === 0) return drain(ctx, { ...measured, pendingRateIndex: null });
  return launch(ctx, measured, rateIndex);
}

/** Starts the task for `rateIndex`, owned by record (see the module comment). */
async function launch(ctx: Ctx, out: RampResult, rateIndex: number): Promise<RampResult> {
  const { plan } = ctx.input;
  const { deps, owner } = ctx;
  const rate = plan.rampRates[rateIndex] as number;
  const problems = checkRampRates([rate]);
  if (problems.length > 0)
    return { ...out, decision: 'halt', reason: `redrive refused: ${problems[0]?.message}` };
  const seq = out.starts + 1;
  const matches = (t: MoveTask, since: number) =>
    t.rate === rate &&
    (t.destinationArn ?? null) === plan.destinationArn &&
    t.startedAt !== null &&
    t.startedAt >= since - START_SKEW_MS;
  const started = (taskHandle: string, requestedAt: number, how: string): RampResult => ({
    ...out,
    decision: 'hold',
    rateIndex,
    rate,
    taskHandle,
    status: 'RUNNING',
    moved: 0,
    toMove: 0,
    pendingRateIndex: null,
    examinePending: false,
    drainUntil: null,
    starts: seq,
    taskRequestedAt: requestedAt,
    // The first check of a step comes one return window after its start at the earliest: only
    // then have the step's first messages had the time to fail and come back.
    dwellSeconds: Math.min(MAX_DWELL, Math.max(plan.dwellSeconds, Math.ceil(out.returnWindowSeconds))),
    reason: `move task ${taskHandle} started at ${rate} msg/s${how}`,
  });
  const refuse = (reason: string): RampResult => ({ ...out, decision: 'refuse', reason });

  const tasks = await deps.moveTasks.list(plan.dlqArn);
  const record = await deps.records.get(plan.dlqArn);
  const retry = record !== undefined && isOwnIntent(record, owner, seq);
  if (retry) {
    // This start was asked for before (a retried step): the earlier attempt may have started it.
    if (record.taskHandle)
      return started(record.taskHandle, record.requestedAt, ' (its recorded handle, adopted by a retry)');
    const candidates = tasks.filter((t) => matches(t, record.requestedAt));
    const only = candidates.length === 1 ? candidates[0] : undefined;
    if (only) {
      const handle = only.taskHandle ?? `(${only.status.toLowerCase()} since ${only.startedAt})`;
      if (only.taskHandle) await deps.records.recordHandle(plan.dlqArn, owner, seq, only.taskHandle);
      return started(
        handle,
        record.requestedAt,
        ' (started by an earlier attempt that crashed before recording it)',
      );
    }
    if (candidates.length > 1)
      return refuse(
        `redrive refused: ${candidates.length} move tasks started after this run asked for one at ${rate} msg/s: which is its own cannot be told; cancel them and start again`,
      );
  }
  const active = activeTask(tasks);
  if (active) return refuse(foreignTask(active));
  const requestedAt = retry ? record.requestedAt : ctx.now();
  if (!retry)
    await deps.records.recordIntent({
      dlqArn: plan.dlqArn,
      ...owner,
      seq,
      rate,
      rateIndex,
      destinationArn: plan.destinationArn,
      requestedAt,
    });
  const result = await deps.moveTasks.start({
    sourceArn: plan.dlqArn,
    destinationArn: plan.destinationArn,
    rate,
  });
  if (!result.ok) {
    if (result.code !== 'TASK_ACTIVE') return { ...out, decision: 'halt', reason: result.refusal };
    // Refused because a task is active: the SDK may have repeated our own accepted call.
    const now = await deps.moveTasks.list(plan.dlqArn);
    const mine = now.filter((t) => t.status === 'RUNNING' && matches(t, requestedAt));
    if (mine.length === 1 && mine[0]?.taskHandle) {
      await deps.records.recordHandle(plan.dlqArn, owner, seq, mine[0].taskHandle);
      return started(mine[0].taskHandle, requestedAt, ' (accepted by a first call whose answer was lost)');
    }
    const other = activeTask(now);
    return refuse(other ? foreignTask(other) : result.refusal);
  }
  await deps.records.recordHandle(plan.dlqArn, owner, seq, result.taskHandle);
  return started(result.taskHandle, requestedAt, '');
}

/** Cancels the current task and waits (bounded) until no task is active; folds its moved count. */
async function stopTask(ctx: Ctx, out: RampResult): Promise<{ out: RampResult; stopped: boolean }> {
  const { deps } = ctx;
  const { plan } = ctx.input;
  const sleep = deps.sleep ?? realSleep;
  if (out.taskHandle) await deps.moveTasks.cancel(out.taskHandle);
  const waitUntil = ctx.now() + (deps.cancelWaitMs ?? 20_000);
  for (;;) {
    const tasks = await deps.moveTasks.list(plan.dlqArn);
    const active = activeTask(tasks);
    const ours = ourTask(tasks, out);
    if (!active) return { out: fold(out, ours?.moved ?? out.moved), stopped: true };
    if (active.taskHandle && active.taskHandle !== out.taskHandle && active.status === 'RUNNING')
      return {
        out: { ...fold(out, ours?.moved ?? out.moved), decision: 'refuse', reason: foreignTask(active) },
        stopped: false,
      };
    if (ctx.now() >= waitUntil)
      return { out: { ...out, status: active.status, moved: ours?.moved ?? out.moved }, stopped: false };
    await sleep(1000);
  }
}

async function stepUp(ctx: Ctx, out: RampResult): Promise<RampResult> {
  const { plan } = ctx.input;
  const next = Math.min(out.rateIndex + 1, plan.rampRates.length - 1);
  const stop = await stopTask(ctx, out);
  if (stop.out.decision === 'refuse') return stop.out;
  if (!stop.stopped)
    return {
      ...stop.out,
      decision: 'hold',
      taskHandle: null,
      pendingRateIndex: next,
      dwellSeconds: Math.min(plan.dwellSeconds, 10),
      reason: `step-up to ${plan.rampRates[next]} msg/s waits for the cancelled task (${stop.out.status})`,
    };
  return restart(ctx, stop.out, next);
}

/**
 * Inventories the DLQ (no task running) and decides: halt on re-inflow, park late poison, or go on.
 * @param why - the accounting that called for it, for the reason text.
 */
async function examine(ctx: Ctx, out: RampResult, why: string): Promise<RampResult> {
  const { plan } = ctx.input;
  const found = await ctx.deps.newcomers(plan);
  const moved = out.movedBefore;
  const atRisk = Math.max(0, moved - out.cleanMoved);
  if (found.partial)
    return {
      ...out,
      decision: 'halt',
      exposure: { returned: 0, atRisk },
      reason: `${why}, and ${found.partialReason}: re-inflow cannot be told from late arrivals, so the ramp stops; ${moved} moved`,
    };
  // A late arrival's extended-client pointer S3 will not answer for could be moved unchecked.
  if (found.payloadRefusal)
    return {
      ...out,
      decision: 'halt',
      exposure: { returned: 0, atRisk },
      reason: `${why}, and ${found.payloadRefusal}: the ramp stops; ${moved} moved`,
    };
  if (found.returned.length > 0) {
    const bySource = countBySource(found.returned);
    const sources = Object.entries(bySource)
      .map(([arn, n]) => `${shortName(arn)}: ${n}`)
      .join(', ');
    return {
      ...out,
      decision: 'halt',
      status: out.status === 'RUNNING' ? 'CANCELLED' : out.status,
      reinflow: found.returned.length,
      reinflowBySource: bySource,
      lateArrivals: out.lateArrivals + found.late.length,
      exposure: { returned: found.returned.length, atRisk },
      reason: `re-inflow: ${found.returned.length} message(s) this run redriven came back to the DLQ (${sources}): the consumer fails them again; ${why}. The move task is stopped after ${moved} of ${out.baseline ?? '?'} moved; up to ${atRisk} moved since the last clean check may still come back; the rest stays in the DLQ`,
    };
  }
  const late = found.late.length;
  const next: RampResult = {
    ...out,
    lateArrivals: out.lateArrivals + late,
    baseline: moved + found.present - found.toPark,
    cleanMoved: moved,
  };
  if (found.toPark > 0)
    return {
      ...next,
      decision: 'park',
      reason: `${why}: ${late} late arrival(s) inventoried, ${found.toPark} of them must not be redriven: parking them before the ramp goes on at ${plan.rampRates[out.rateIndex]} msg/s`,
    };
  const resumed = await launch(ctx, next, out.rateIndex);
  return resumed.decision === 'hold'
    ? {
        ...resumed,
        reason: `${why}: ${late} late arrival(s) inventoried, none to park; ${resumed.reason}`,
      }
    : resumed;
}

/** Everything is moved and no task runs: wait out the return window, then account once more. */
async function drain(ctx: Ctx, out: RampResult): Promise<RampResult> {
  const now = ctx.now();
  const windowMs = out.returnWindowSeconds * 1000;
  if (out.drainUntil === null || now < out.drainUntil) {
    const until = out.drainUntil ?? now + windowMs;
    return {
      ...out,
      decision: 'hold',
      drainUntil: until,
      dwellSeconds: Math.max(1, Math.ceil((until - now) / 1000)),
      reason: `${total(out)} message(s) moved; holding ${Math.ceil((until - now) / 1000)} s more so the last of them have their return window (${out.returnWindowSeconds} s) before the ramp is complete`,
    };
  }
  const depth = await dlqDepth(ctx);
  const expected = (out.baseline ?? depth + out.movedBefore) - out.movedBefore;
  const excess = depth - expected;
  const measured = { ...out, depth, excess };
  if (excess > 0)
    return examine(
      ctx,
      { ...measured, drainUntil: null },
      `after the return window the DLQ holds ${depth} message(s), ${excess} more than expected`,
    );
  if (depth > 0 && out.leftoverRestarts < MAX_LEFTOVER_RESTARTS) {
    const again = await launch(
      ctx,
      { ...measured, leftoverRestarts: out.leftoverRestarts + 1 },
      out.rateIndex,
    );
    return again.decision === 'hold'
      ? {
          ...again,
          reason: `${depth} message(s) were not moved (held by another receiver when the task started): ${again.reason}`,
        }
      : again;
  }
  return {
    ...measured,
    decision: 'done',
    cleanMoved: total(out),
    reason: `move task(s) moved ${total(out)} message(s); none came back within the return window (${out.returnWindowSeconds} s)${depth > 0 ? `; ${depth} left in the DLQ` : ''}`,
  };
}

async function check(ctx: Ctx, prev: RampResult): Promise<RampResult> {
  const { plan } = ctx.input;
  const { deps } = ctx;
  const out: RampResult = { ...prev, checks: prev.checks + 1 };
  if (out.checks > (deps.maxChecks ?? MAX_GATE_CHECKS)) {
    const stop = out.taskHandle ? await stopTask(ctx, out) : { out, stopped: true };
    return {
      ...stop.out,
      decision: 'halt',
      reason: `the ramp reached its bound of ${deps.maxChecks ?? MAX_GATE_CHECKS} gate checks (Step Functions ends an execution at 25,000 history events): the move task is stopped after ${total(stop.out)} moved; the rest stays in the DLQ`,
    };
  }
  const tasks = await deps.moveTasks.list(plan.dlqArn);
  const task = out.taskHandle ? ourTask(tasks, out) : undefined;
  const active = activeTask(tasks);
  if (active && active.status === 'RUNNING' && active !== task)
    return { ...out, decision: 'refuse', reason: foreignTask(active) };
  const briefly = { ...out, decision: 'hold' as const, dwellSeconds: Math.min(plan.dwellSeconds, 10) };
  if (out.taskHandle === null) {
    // No current task: a step-up, an inventory or the return window is pending.
    if (active)
      return {
        ...briefly,
        status: active.status,
        reason: `waiting for the cancelled task (${active.status})`,
      };
    if (out.pendingRateIndex !== null) return restart(ctx, out, out.pendingRateIndex);
    if (out.examinePending)
      return examine(ctx, { ...out, examinePending: false }, 'the DLQ held more than the plan expects');
    if (out.drainUntil !== null) return drain(ctx, out);
    return { ...out, decision: 'halt', status: null, reason: 'no move task of this run to supervise' };
  }
  if (!task)
    return ctx.now() - (out.taskRequestedAt ?? 0) < TASK_LISTING_GRACE_MS
      ? { ...briefly, reason: `move task ${out.taskHandle} is not listed yet` }
      : {
          ...out,
          decision: 'halt',
          status: null,
          reason: `move task ${out.taskHandle} of this run is not listed for this DLQ`,
        };
  const seen: RampResult = {
    ...out,
    status: task.status,
    moved: task.moved,
    toMove: task.toMove ?? out.toMove,
    failureReason: task.failureReason,
  };
  switch (task.status) {
    case 'RUNNING':
      return gate(ctx, seen, task);
    case 'COMPLETED':
      return drain(ctx, fold(seen, task.moved));
    case 'FAILED':
      return {
        ...fold(seen, task.moved),
        decision: 'halt',
        reason: `move task FAILED (${task.failureReason ?? 'no reason given'}) after moving ${task.moved} of ${task.toMove ?? '?'} message(s); the rest stays in the DLQ`,
      };
    case 'CANCELLED':
      return {
        ...fold(seen, task.moved),
        decision: 'halt',
        reason: `move task was cancelled outside the workflow after moving ${task.moved} message(s)`,
      };
    default:
      return {
        ...seen,
        decision: 'hold',
        dwellSeconds: Math.min(plan.dwellSeconds, 10),
        reason: `move task status ${task.status}: waiting`,
      };
  }
}

async function gate(ctx: Ctx, seen: RampResult, task: MoveTask): Promise<RampResult> {
  const { plan, preflight } = ctx.input;
  const { deps } = ctx;
  const moved = total(seen);
  const depth = await dlqDepth(ctx);
  const baseline = seen.baseline ?? depth + moved;
  const expected = baseline - moved;
  const excess = depth - expected;
  const backlog = await sourceBacklog(deps, preflight.sourceArns);
  const measured: RampResult = { ...seen, depth, excess, baseline, sourceBacklog: backlog };
  if (excess > 0) {
    const why = `the DLQ holds ${depth} message(s), ${excess} more than the ${expected} the plan has left to move`;
    const stop = await stopTask(ctx, measured);
    if (stop.out.decision === 'refuse') return stop.out;
    if (!stop.stopped)
      return {
        ...stop.out,
        decision: 'hold',
        examinePending: true,
        taskHandle: null,
        dwellSeconds: Math.min(plan.dwellSeconds, 10),
        reason: `${why}: the task is cancelled; the DLQ is inventoried once it has stopped (${stop.out.status})`,
      };
    return examine(ctx, stop.out, why);
  }
  const clean: RampResult = { ...measured, cleanMoved: moved };
  if (depth === 0) {
    // Nothing left: the task idles until SQS ends it. Stop it, then wait out the return window.
    const stop = await stopTask(ctx, clean);
    if (stop.out.decision === 'refuse') return stop.out;
    return stop.stopped
      ? drain(ctx, stop.out)
      : {
          ...stop.out,
          decision: 'hold',
          dwellSeconds: Math.min(plan.dwellSeconds, 10),
          reason: 'the DLQ is empty; waiting for the idle task to stop',
        };
  }
  const factor = deps.backlogFactor ?? 2;
  const limit = seen.rate * plan.dwellSeconds * factor;
  if (backlog > limit)
    return {
      ...clean,
      decision: 'hold',
      reason: `source backlog ${backlog} exceeds ${limit} (rate x dwell x ${factor}): holding at ${seen.rate} msg/s`,
    };
  if (seen.rateIndex < plan.rampRates.length - 1)
    return {
      ...clean,
      decision: 'step-up',
      reason: `healthy at ${seen.rate} msg/s (${task.moved} moved, the DLQ holds what the plan expects): stepping up to ${plan.rampRates[seen.rateIndex + 1]} msg/s`,
    };
  // Top rate: the plan's dwell, longer only as far as the remaining gate checks require.
  const checksLeft = Math.max(1, (deps.maxChecks ?? MAX_GATE_CHECKS) - clean.checks - RESERVED_CHECKS);
  const secondsLeft = Math.ceil(expected / Math.max(1, seen.rate));
  return {
    ...clean,
    decision: 'hold',
    dwellSeconds: Math.min(MAX_DWELL, Math.max(plan.dwellSeconds, Math.ceil(secondsLeft / checksLeft))),
    reason: `healthy at the top rate ${seen.rate} msg/s: ${moved} of ${baseline} moved`,
  };
}
