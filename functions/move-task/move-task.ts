/**
 * The ramped bulk redrive (states StartMoveTask, CheckProgress, StepUp, ResumeRamp; one function,
 * `action`), with a health gate that works by accounting, not by peeking (DESIGN.md "Direction").
 *
 * **The plan's expectation.** `baseline` is what the ramp must move: the DLQ depth (visible + in
 * flight + delayed) when the first task starts, plus late arrivals the gate accepted. After each
 * dwell the DLQ should hold `baseline - moved` (moved: the tasks' ApproximateNumberOfMessagesMoved,
 * summed over the run's tasks). More than that (`excess`) is re-inflow (redriven messages failing
 * again and coming back behind the backlog, where no peek reaches) or late arrivals (messages that
 * dead-lettered after triage): both stop the ramp. The task is cancelled (a step-up is a
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
 * rate and destination. Any other task is someone else's (a console redrive): the run is
 * refused and the refusal names it (`decision: 'refuse'`); the pipeline never cancels it.
 *
 * **Bounded.** Every gate check counts toward {@link MAX_GATE_CHECKS}, derived from Step
 * Functions' 25,000-event history limit; at the bound the task is cancelled and the run halts
 * (then Reconcile and Notify run), and the top-rate dwell grows only as far as the remaining
 * checks require.
 *
 * FAILED surfaces FailureReason and ApproximateNumberOfMessagesMoved and halts.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-configure-dead-letter-queue-redrive.html
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ListMessageMoveTasks.html
 * @see https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html (25,000 history events)
 */
import type { CancelRequest, CancelRequests } from '#incident/cancel-requests.js';
import { ExecutionPlan, parseSqsArn } from '#incident/execution-plan.js';
import type { EnvelopeStore } from '#inventory/envelope-store.js';
import type { ForeignTask, RampReason } from '#platform/reasons.js';
import { rampReasonText } from '#platform/reasons-text.js';
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
import {
  checkBound,
  drainVerdict,
  drainWaiting,
  eventVerdict,
  gateVerdict,
  inventoryVerdict,
  MAX_GATE_CHECKS,
  RampState,
  type RampVerdict,
  rateInForce,
  startAt,
  startVerdict,
} from '#transfer/ramp-policy.js';

export { MAX_GATE_CHECKS };

/** What the gate decided; the ASL's RampDecision? state routes on it. */
export const RAMP_DECISIONS = ['step-up', 'hold', 'done', 'halt', 'park', 'refuse', 'cancelled'] as const;
type Decision = (typeof RAMP_DECISIONS)[number];

const count = z.number().check(z.int(), z.gte(0));

/** `$.ramp` of the move-task ramp (docs/contracts.md): the shared ramp state plus the task's fields. */
export const MoveTaskRamp = z.extend(RampState, {
  decision: z._default(z.enum(RAMP_DECISIONS), 'hold'),
  taskHandle: z._default(z.nullable(z.string()), null),
  status: z._default(z.nullable(z.string()), null),
  /** Moved by the current task. */
  moved: z._default(z.number(), 0),
  toMove: z._default(z.number(), 0),
  failureReason: z._default(z.nullable(z.string()), null),
  dwellSeconds: z._default(count, 0),
  /** Rate index to start once the cancelled task has stopped (step-up in progress). */
  pendingRateIndex: z._default(z.nullable(z.number().check(z.int())), null),
  /** Messages moved by earlier tasks of this run. */
  movedBefore: z._default(z.number(), 0),
  /** Gate checks so far (bounded by MAX_GATE_CHECKS). */
  checks: z._default(count, 0),
  /** The task was cancelled to inventory the DLQ and is still stopping. */
  examinePending: z._default(z.boolean(), false),
  /** Starts of this run so far (the `seq` of the last one). */
  starts: z._default(count, 0),
  /** When the current task was asked for, epoch ms (identifies it once SQS stops listing its handle). */
  taskRequestedAt: z._default(z.nullable(z.number()), null),
  /** Restarts for messages a completed task left behind (held by another receiver at its start). */
  leftoverRestarts: z._default(count, 0),
  /** DLQ depth (visible + in flight + delayed) at this step, or null when not measured. */
  depth: z._default(z.nullable(z.number()), null),
  /** depth - (baseline - moved so far); above 0 is re-inflow or late arrival. */
  excess: z._default(z.number(), 0),
  sourceBacklog: z._default(z.number(), 0),
});
/** The ramp slot, every field set (it is the next step's `ramp` input). */
export type RampResult = z.infer<typeof MoveTaskRamp>;

/** Input of the MoveTask function. */
export const MoveTaskInput = z.object({
  action: z.enum(['start', 'check', 'step-up', 'resume', 'stop']),
  plan: ExecutionPlan,
  preflight: z.looseObject({
    sourceArns: z.array(z.string()),
    /** The return window of a redriven message, seconds (Preflight's verification window). */
    verifyWindowSeconds: z.optional(z.number().check(z.gte(0))),
  }),
  ramp: z.optional(MoveTaskRamp),
  /** `$$.Execution.Name`: with the incident, the owner of the tasks this run starts. */
  executionName: z.optional(z.string().check(z.minLength(1))),
});
export type MoveTaskInput = z.infer<typeof MoveTaskInput>;

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

/** Allowed difference between the Lambda's clock and SQS's StartedTimestamp, milliseconds. */
const START_SKEW_MS = 2000;
/** How long a task just started may be missing from ListMessageMoveTasks, milliseconds. */
const TASK_LISTING_GRACE_MS = 60_000;

type Ctx = { input: MoveTaskInput; deps: MoveTaskDeps; owner: MoveTaskOwner; now: () => number };

/** The ramp slot this step starts from: the previous one, its per-step measurements cleared. */
function base(input: MoveTaskInput): RampResult {
  const { plan } = input;
  const prev = MoveTaskRamp.parse(input.ramp ?? {});
  return {
    ...prev,
    decision: 'hold',
    rate: plan.rampRates[prev.rateIndex] ?? plan.rampRates[0] ?? 1,
    failureReason: null,
    reason: '',
    dwellSeconds: plan.dwellSeconds,
    returnWindowSeconds:
      input.preflight.verifyWindowSeconds ?? input.ramp?.returnWindowSeconds ?? plan.verifyMarginSeconds,
    depth: null,
    excess: 0,
    sourceBacklog: 0,
  };
}

const total = (r: RampResult) => r.movedBefore + r.moved;

/** The ASL decision of a policy action (the engine acts on the others before it answers). */
const DECISION_OF: Partial<Record<RampVerdict['action'], Decision>> = {
  'step-up': 'step-up',
  hold: 'hold',
  drain: 'hold',
  start: 'hold',
  halt: 'halt',
  park: 'park',
  done: 'done',
  refuse: 'refuse',
  cancelled: 'cancelled',
};

/** The slot with a verdict applied: its fields, decision, rate, dwell, exposure and reason. */
function applied(out: RampResult, v: RampVerdict): RampResult {
  return {
    ...out,
    ...v.patch,
    decision: DECISION_OF[v.action] ?? 'hold',
    rateIndex: v.rateIndex,
    rate: v.rate,
    dwellSeconds: v.dwellSeconds,
    why: v.why,
    reason: rampReasonText(v.why),
  } as RampResult;
}

/** The policy's answer to an event this step observed. */
function event(ctx: Ctx, out: RampResult, why: RampReason, patch: Partial<RampResult> = {}): RampResult {
  const v = eventVerdict(ctx.input.plan, out, { now: ctx.now(), moved: total(out) }, why, patch);
  return applied({ ...out, ...patch }, v);
}

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

/** A task the pipeline did not start, as a reason. */
const foreign = (task: MoveTask): { code: 'foreign-task' } & ForeignTask => ({
  code: 'foreign-task',
  taskHandle: task.taskHandle,
  status: task.status,
  rate: task.rate,
  startedAt: task.startedAt,
  moved: task.moved,
});

/** Folds the current task's moved count into `movedBefore`: no task is current, nothing moves from `at`. */
function fold(out: RampResult, moved: number, at: number): RampResult {
  return {
    ...out,
    ...rateInForce(out, 0, at, out.movedBefore + moved),
    movedBefore: out.movedBefore + moved,
    moved: 0,
    taskHandle: null,
  };
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
    const folded = previous && previous.status !== 'RUNNING' ? fold(out, previous.moved, ctx.now()) : out;
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
  const why: RampReason = {
    code: 'cancelled',
    by: request.by,
    via: request.via,
    at: request.at,
    note: request.reason ?? null,
    moved: out.movedBefore + moved,
    restInDlq: false,
  };
  return event(ctx, out, why, {
    status: task ? (task.status === 'RUNNING' ? 'CANCELLING' : task.status) : out.status,
    moved,
    pendingRateIndex: null,
  });
}

/**
 * StopRampAfterFailure (`action: 'stop'`): a step of the ramp failed, so no health gate watches the
 * run's move task any more. Cancels the task the run's record attributes to this run, if it still
 * runs (a task someone else started is left alone), and waits (bounded by `cancelWaitMs`) until it
 * has stopped, so that ReconcileAfterFailure counts what it moved and nothing moves after the
 * report. `decision: 'halt'`; `status` is the task's last status.
 *
 * @see https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CancelMessageMoveTask.html
 */
async function stopAfterFailure(ctx: Ctx, out: RampResult): Promise<RampResult> {
  const { deps } = ctx;
  const { plan } = ctx.input;
  const orphan = await cancelOrphanedTask(plan.dlqArn, ctx.owner, deps);
  const failed = { code: 'stopped-after-failure', cancelled: false, moved: 0, stillStatus: null } as const;
  const waitMs = deps.cancelWaitMs ?? 20_000;
  const waitSeconds = Math.round(waitMs / 1000);
  if (!orphan) return event(ctx, out, { ...failed, taskHandle: null, waitSeconds });
  const sleep = deps.sleep ?? realSleep;
  const waitUntil = ctx.now() + waitMs;
  for (;;) {
    const task = (await deps.moveTasks.list(plan.dlqArn)).find((t) => t.taskHandle === orphan.taskHandle);
    const stopping = task?.status === 'RUNNING' || task?.status === 'CANCELLING';
    if (!stopping || ctx.now() >= waitUntil) {
      const moved = task?.moved ?? orphan.moved;
      const why: RampReason = {
        ...failed,
        taskHandle: orphan.taskHandle,
        cancelled: orphan.cancelled,
        moved,
        stillStatus: stopping ? (task?.status ?? null) : null,
        waitSeconds,
      };
      return event(ctx, out, why, {
        taskHandle: orphan.taskHandle,
        status: task?.status ?? 'CANCELLED',
        moved,
      });
    }
    await sleep(1000);
  }
}

/** StartMoveTask: late arrivals since Park first, then the first task at `rampRates[0]`. */
async function first(ctx: Ctx, out: RampResult): Promise<RampResult> {
  const depth = await dlqDepth(ctx);
  const at = { now: ctx.now(), moved: 0 };
  if (depth === 0) return applied({ ...out, depth }, drainlessDone(ctx, out));
  const inDlq = await ctx.deps.envelopes.countEnvelopes(ctx.input.plan.dlqArn, 'IN_DLQ');
  if (depth > inDlq)
    return examine(ctx, { ...out, depth, excess: depth - inDlq }, { code: 'excess-at-start', depth, inDlq });
  const measured = { ...out, depth, baseline: depth };
  return launch(ctx, measured, 0, startAt(ctx.input.plan, measured, at, 0));
}

/** Nothing to move after park and sample: done at once. */
function drainlessDone(ctx: Ctx, out: RampResult): RampVerdict {
  const v = eventVerdict(ctx.input.plan, out, { now: ctx.now(), moved: 0 }, { code: 'empty-at-start' });
  return { ...v, action: 'done' };
}

/** A later start (step-up, resume): the accounting first, so re-inflow never hides in a new baseline. */
async function restart(ctx: Ctx, out: RampResult, rateIndex: number): Promise<RampResult> {
  const depth = await dlqDepth(ctx);
  const baseline = out.baseline ?? depth + out.movedBefore;
  const m = { now: ctx.now(), moved: out.movedBefore, depth, baseline };
  const measured = { ...out, depth, excess: depth - (baseline - out.movedBefore), baseline };
  const v = startVerdict(ctx.input.plan, measured, m, rateIndex);
  if (v.action === 'examine') return examine(ctx, { ...measured, ...v.patch }, v.why);
  if (v.action === 'drain') return drain(ctx, { ...measured, pendingRateIndex: null });
  return launch(ctx, measured, rateIndex, v);
}

/**
 * Starts the task the verdict asks for (`start`), owned by record (see the module comment);
 * any other verdict (a rate the plan may not run) is the answer as it is.
 */
async function launch(ctx: Ctx, out: RampResult, rateIndex: number, v?: RampVerdict): Promise<RampResult> {
  const verdict = v ?? startAt(ctx.input.plan, out, { now: ctx.now(), moved: total(out) }, rateIndex);
  if (verdict.action !== 'start') return applied(out, verdict);
  const { plan } = ctx.input;
  const { deps, owner } = ctx;
  const rate = verdict.rate;
  const seq = out.starts + 1;
  const matches = (t: MoveTask, since: number) =>
    t.rate === rate &&
    (t.destinationArn ?? null) === plan.destinationArn &&
    t.startedAt !== null &&
    t.startedAt >= since - START_SKEW_MS;
  const started = (
    taskHandle: string,
    requestedAt: number,
    by: 'started' | 'record' | 'crashed-attempt' | 'lost-answer',
  ) =>
    applied(
      {
        ...out,
        ...rateInForce(out, rate, requestedAt, out.movedBefore),
        taskHandle,
        status: 'RUNNING',
        moved: 0,
        toMove: 0,
        pendingRateIndex: null,
        examinePending: false,
        starts: seq,
        taskRequestedAt: requestedAt,
      },
      { ...verdict, why: { code: 'task-started', taskHandle, rate, by } },
    );
  const tasks = await deps.moveTasks.list(plan.dlqArn);
  const record = await deps.records.get(plan.dlqArn);
  const retry = record !== undefined && isOwnIntent(record, owner, seq);
  if (retry) {
    // This start was asked for before (a retried step): the earlier attempt may have started it.
    if (record.taskHandle) return started(record.taskHandle, record.requestedAt, 'record');
    const candidates = tasks.filter((t) => matches(t, record.requestedAt));
    const only = candidates.length === 1 ? candidates[0] : undefined;
    if (only) {
      const handle = only.taskHandle ?? `(${only.status.toLowerCase()} since ${only.startedAt})`;
      if (only.taskHandle) await deps.records.recordHandle(plan.dlqArn, owner, seq, only.taskHandle);
      return started(handle, record.requestedAt, 'crashed-attempt');
    }
    if (candidates.length > 1)
      return event(ctx, out, { code: 'ambiguous-tasks', count: candidates.length, rate });
  }
  const active = activeTask(tasks);
  if (active) return event(ctx, out, foreign(active));
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
    if (result.code !== 'TASK_ACTIVE')
      return event(ctx, out, { code: 'start-refused', detail: result.refusal });
    // Refused because a task is active: the SDK may have repeated our own accepted call.
    const now = await deps.moveTasks.list(plan.dlqArn);
    const mine = now.filter((t) => t.status === 'RUNNING' && matches(t, requestedAt));
    if (mine.length === 1 && mine[0]?.taskHandle) {
      await deps.records.recordHandle(plan.dlqArn, owner, seq, mine[0].taskHandle);
      return started(mine[0].taskHandle, requestedAt, 'lost-answer');
    }
    const other = activeTask(now);
    return other
      ? event(ctx, out, foreign(other))
      : event(ctx, out, { code: 'ambiguous-tasks', count: 0, rate }, {});
  }
  await deps.records.recordHandle(plan.dlqArn, owner, seq, result.taskHandle);
  return started(result.taskHandle, requestedAt, 'started');
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
    if (!active) return { out: fold(out, ours?.moved ?? out.moved, ctx.now()), stopped: true };
    if (active.taskHandle && active.taskHandle !== out.taskHandle && active.status === 'RUNNING')
      return {
        out: event(ctx, fold(out, ours?.moved ?? out.moved, ctx.now()), foreign(active)),
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
    return event(
      ctx,
      stop.out,
      { code: 'step-up-waits', rate: plan.rampRates[next] as number, status: stop.out.status },
      { taskHandle: null, pendingRateIndex: next },
    );
  return restart(ctx, stop.out, next);
}

/**
 * Inventories the DLQ (no task running) and acts on the policy's verdict: halt on re-inflow, park
 * late poison, or go on at the same rate.
 * @param after - the accounting that called for it.
 */
async function examine(ctx: Ctx, out: RampResult, after: RampReason): Promise<RampResult> {
  const { plan } = ctx.input;
  const found = await ctx.deps.newcomers(plan);
  const v = inventoryVerdict(
    plan,
    out,
    {
      now: ctx.now(),
      moved: out.movedBefore,
      partial: found.partial ? (found.partialReason ?? 'the inventory is partial') : null,
      payloadRefusal: found.payloadRefusal,
      returned: found.returned.length,
      returnedBySource: countBySource(found.returned),
      late: found.late.length,
      present: found.present,
      toPark: found.toPark,
      baseline: out.baseline,
    },
    after,
  );
  if (v.action === 'halt' && v.why.code === 'reinflow')
    return applied({ ...out, status: out.status === 'RUNNING' ? 'CANCELLED' : out.status }, v);
  if (v.action !== 'start') return applied(out, v);
  const resumed = await launch(ctx, { ...out, ...v.patch }, out.rateIndex, v);
  const why = resumed.why;
  return resumed.decision === 'hold' && why?.code === 'task-started' && v.why.code === 'late-none-to-park'
    ? { ...resumed, why: { ...v.why, next: why }, reason: rampReasonText({ ...v.why, next: why }) }
    : resumed;
}

/** Everything is moved and no task runs: wait out the return window, then account once more. */
async function drain(ctx: Ctx, out: RampResult): Promise<RampResult> {
  const { plan } = ctx.input;
  const now = ctx.now();
  const m = { now, moved: out.movedBefore, baseline: out.baseline, leftoverRestarts: out.leftoverRestarts };
  if (drainWaiting(out, now)) return applied(out, drainVerdict(plan, out, { ...m, depth: null }));
  const depth = await dlqDepth(ctx);
  const expected = (out.baseline ?? depth + out.movedBefore) - out.movedBefore;
  const measured = { ...out, depth, excess: depth - expected };
  const v = drainVerdict(plan, measured, { ...m, depth });
  if (v.action === 'examine') return examine(ctx, { ...measured, ...v.patch }, v.why);
  if (v.action !== 'start') return applied(measured, v);
  const again = await launch(
    ctx,
    { ...measured, leftoverRestarts: out.leftoverRestarts + 1 },
    out.rateIndex,
    v,
  );
  return again.decision === 'hold' && again.why?.code === 'task-started'
    ? {
        ...again,
        why: { code: 'leftover', depth, next: again.why },
        reason: rampReasonText({ code: 'leftover', depth, next: again.why }),
      }
    : again;
}

async function check(ctx: Ctx, prev: RampResult): Promise<RampResult> {
  const { plan } = ctx.input;
  const { deps } = ctx;
  const out: RampResult = { ...prev, checks: prev.checks + 1 };
  const maxChecks = deps.maxChecks ?? MAX_GATE_CHECKS;
  const bound = checkBound(plan, out, { now: ctx.now(), moved: total(out), checks: out.checks, maxChecks });
  if (bound) {
    const stop = out.taskHandle ? await stopTask(ctx, out) : { out, stopped: true };
    return applied(stop.out, { ...bound, why: { code: 'check-bound', maxChecks, moved: total(stop.out) } });
  }
  const tasks = await deps.moveTasks.list(plan.dlqArn);
  const task = out.taskHandle ? ourTask(tasks, out) : undefined;
  const active = activeTask(tasks);
  if (active && active.status === 'RUNNING' && active !== task) return event(ctx, out, foreign(active));
  if (out.taskHandle === null) return between(ctx, out, active);
  if (!task)
    return ctx.now() - (out.taskRequestedAt ?? 0) < TASK_LISTING_GRACE_MS
      ? event(ctx, out, { code: 'task-not-listed-yet', taskHandle: out.taskHandle })
      : event(ctx, out, { code: 'task-not-listed', taskHandle: out.taskHandle }, { status: null });
  const seen: RampResult = {
    ...out,
    status: task.status,
    moved: task.moved,
    toMove: task.toMove ?? out.toMove,
    failureReason: task.failureReason,
  };
  switch (task.status) {
    case 'RUNNING':
      return gate(ctx, seen);
    case 'COMPLETED':
      return drain(ctx, fold(seen, task.moved, ctx.now()));
    case 'FAILED':
      return event(ctx, fold(seen, task.moved, ctx.now()), {
        code: 'task-failed',
        failureReason: task.failureReason,
        moved: task.moved,
        toMove: task.toMove,
      });
    case 'CANCELLED':
      return event(ctx, fold(seen, task.moved, ctx.now()), {
        code: 'task-cancelled-outside',
        moved: task.moved,
      });
    default:
      return event(ctx, seen, { code: 'task-status', status: task.status });
  }
}

/** No current task: a step-up, an inventory or the return window is pending. */
async function between(ctx: Ctx, out: RampResult, active: MoveTask | undefined): Promise<RampResult> {
  if (active)
    return event(
      ctx,
      out,
      { code: 'cancelled-task-stopping', status: active.status },
      { status: active.status },
    );
  if (out.pendingRateIndex !== null) return restart(ctx, out, out.pendingRateIndex);
  if (out.examinePending)
    return examine(
      ctx,
      { ...out, examinePending: false },
      { code: 'excess', depth: out.depth ?? 0, expected: 0, excess: 0 },
    );
  if (out.drainUntil !== null) return drain(ctx, out);
  return event(ctx, out, { code: 'no-task' }, { status: null });
}

/** A running task's check: measure, ask the policy, act (cancel and inventory, stop and drain, step up, hold). */
async function gate(ctx: Ctx, seen: RampResult): Promise<RampResult> {
  const { plan, preflight } = ctx.input;
  const { deps } = ctx;
  const moved = total(seen);
  const depth = await dlqDepth(ctx);
  const baseline = seen.baseline ?? depth + moved;
  const backlog = await sourceBacklog(deps, preflight.sourceArns);
  const measured: RampResult = {
    ...seen,
    depth,
    excess: depth - (baseline - moved),
    baseline,
    sourceBacklog: backlog,
  };
  const v = gateVerdict(plan, measured, {
    now: ctx.now(),
    moved,
    depth,
    baseline,
    backlog,
    checks: seen.checks,
    maxChecks: deps.maxChecks ?? MAX_GATE_CHECKS,
    backlogFactor: deps.backlogFactor ?? 2,
  });
  if (v.action === 'examine') {
    const stop = await stopTask(ctx, measured);
    if (stop.out.decision === 'refuse') return stop.out;
    if (!stop.stopped) {
      const why = v.why as Extract<RampReason, { code: 'excess' }>;
      return event(
        ctx,
        stop.out,
        { ...why, code: 'examine-pending', status: stop.out.status },
        {
          examinePending: true,
          taskHandle: null,
        },
      );
    }
    return examine(ctx, stop.out, v.why);
  }
  if (v.action === 'stop-and-drain') {
    // Nothing left: the task idles until SQS ends it. Stop it, then wait out the return window.
    const clean = { ...measured, ...v.patch } as RampResult;
    const stop = await stopTask(ctx, clean);
    if (stop.out.decision === 'refuse') return stop.out;
    return stop.stopped ? drain(ctx, stop.out) : event(ctx, stop.out, { code: 'empty-task-stopping' });
  }
  return applied(measured, v);
}
