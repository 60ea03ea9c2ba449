import { describe, expect, it } from 'vitest';
import type { QueueInfo } from '#platform/sqs-queues.js';
import type { Newcomer, Newcomers } from '#transfer/late-arrivals.js';
import type { MoveTaskRecord, MoveTaskRecords } from '#transfer/move-task-record.js';
import type { MoveTask, StartMoveTaskResult } from '#transfer/move-tasks.js';
import {
  MAX_GATE_CHECKS,
  type MoveTaskDeps,
  type MoveTaskInput,
  moveTask,
  type RampResult,
} from '../../functions/move-task/move-task.js';
import { planFor } from '../support/redrive-fixtures.js';

// The ramp's decisions against plain fakes of SQS (a DLQ depth, the move tasks), the move-task
// record, the envelope count and the gate's inventory. The same code runs against the local stack
// in test/integration/move-task.test.ts and in the fault scenarios (test/workflow/scenarios.test.ts).
const DLQ = 'arn:aws:sqs:us-east-1:123456789012:orders-dlq';
const ORDERS = 'arn:aws:sqs:us-east-1:123456789012:orders';
const PAYMENTS = 'arn:aws:sqs:us-east-1:123456789012:payments';
const plan = planFor(
  { dlqArn: DLQ, dlqUrl: 'http://sqs/orders-dlq', incidentId: 'inc-1' },
  { rampRates: [5, 50, 200], dwellSeconds: 60 },
);
const WINDOW = 12;
const preflight = { sourceArns: [ORDERS], verifyWindowSeconds: WINDOW };
const T0 = 1_767_349_000_000;

function newcomer(
  messageId: string,
  sourceArn = ORDERS,
  classification: Newcomer['classification'] = 'transient',
) {
  return { messageId, idempotencyKey: `k-${messageId}`, sourceArn, classification };
}

/** A small world: a DLQ with a depth, move tasks SQS runs, the record, the envelopes, a clock. */
function world(o: { depth: number; inDlq?: number; backlog?: number; newcomers?: Partial<Newcomers> }) {
  const log: string[] = [];
  const state = {
    depth: o.depth,
    backlog: o.backlog ?? 0,
    now: T0,
    tasks: [] as MoveTask[],
    record: undefined as MoveTaskRecord | undefined,
    newcomers: {
      partial: false,
      partialReason: null,
      present: 0,
      returned: [],
      late: [],
      toPark: 0,
      payloadRefusal: null,
      warnings: [],
      ...o.newcomers,
    } as Newcomers,
    /** What a Start answers instead of starting (TASK_ACTIVE...). */
    startAnswer: undefined as StartMoveTaskResult | undefined,
  };
  let handles = 0;
  const info = (visible: number) => ({ visible, inFlight: 0, delayed: 0, url: 'u' }) as QueueInfo;
  const records: MoveTaskRecords = {
    get: async () => (state.record ? { ...state.record } : undefined),
    recordIntent: async (r) => {
      log.push(`intent ${r.seq} @${r.rate}`);
      state.record = { ...r, taskHandle: null, updatedAt: '' };
    },
    recordHandle: async (_dlq, owner, seq, handle) => {
      log.push(`handle ${seq} ${handle}`);
      if (state.record && state.record.seq === seq && state.record.incidentId === owner.incidentId)
        state.record.taskHandle = handle;
    },
  };
  const deps: MoveTaskDeps = {
    moveTasks: {
      list: async () => state.tasks.map((t) => ({ ...t })),
      start: async ({ rate }) => {
        log.push(`start ${rate}`);
        if (state.startAnswer) return state.startAnswer;
        const handle = `H${++handles}`;
        state.tasks.unshift(task({ taskHandle: handle, rate, moved: 0, startedAt: state.now + 300 }));
        return { ok: true, taskHandle: handle };
      },
      cancel: async (handle) => {
        log.push(`cancel ${handle}`);
        const t = state.tasks.find((x) => x.taskHandle === handle);
        if (!t) return { cancelled: false, moved: null };
        t.status = 'CANCELLED';
        t.taskHandle = null;
        return { cancelled: true, moved: t.moved };
      },
    },
    records,
    queues: {
      describe: async () => info(state.depth),
      resolveByName: async () => info(state.backlog),
    },
    envelopes: { countEnvelopes: async () => o.inDlq ?? o.depth },
    newcomers: async () => {
      log.push('inventory');
      return state.newcomers;
    },
    sleep: async (ms) => {
      state.now += ms;
    },
    now: () => state.now,
  };
  return { deps, state, log };
}

/** The record an earlier attempt of StartMoveTask left: the intent at T0, no handle yet. */
function intentOfFirstStart(): MoveTaskRecord {
  return {
    dlqArn: DLQ,
    incidentId: 'inc-1',
    executionName: 'exec-1',
    seq: 1,
    rate: 5,
    rateIndex: 0,
    destinationArn: null,
    requestedAt: T0,
    taskHandle: null,
    updatedAt: '',
  };
}

function task(over: Partial<MoveTask>): MoveTask {
  return {
    taskHandle: 'H1',
    status: 'RUNNING',
    sourceArn: DLQ,
    destinationArn: null,
    rate: 5,
    moved: 0,
    toMove: null,
    failureReason: null,
    startedAt: T0,
    ...over,
  };
}

/** One invocation, with the previous step's output as `$.ramp` (as the ASL passes it). */
const run = (deps: MoveTaskDeps, action: MoveTaskInput['action'], ramp?: RampResult) =>
  moveTask(
    {
      action,
      plan,
      preflight,
      executionName: 'exec-1',
      ...(ramp ? { ramp } : {}),
    },
    deps,
  );

/** Starts the ramp in `w`, then lets the running task move `moved` messages (the DLQ shrinks by as many). */
async function started(w: ReturnType<typeof world>, moved = 0): Promise<RampResult> {
  const ramp = await run(w.deps, 'start');
  const t = w.state.tasks[0] as MoveTask;
  t.moved = moved;
  w.state.depth -= moved;
  w.state.now += 60_000;
  return ramp;
}

describe('StartMoveTask: late arrivals before the first task (N02) and ownership by record', () => {
  it('starts at the first rate with the DLQ depth as the baseline, recording the intent before the call and the handle after', async () => {
    const w = world({ depth: 300 });
    const ramp = await run(w.deps, 'start');
    expect([ramp.decision, ramp.rate, ramp.taskHandle, ramp.baseline, ramp.starts]).toEqual([
      'hold',
      5,
      'H1',
      300,
      1,
    ]);
    expect(w.log).toEqual(['intent 1 @5', 'start 5', 'handle 1 H1']);
    expect(w.state.record).toMatchObject({
      incidentId: 'inc-1',
      executionName: 'exec-1',
      seq: 1,
      taskHandle: 'H1',
    });
  });

  it('N02 inventories the messages that arrived after triage and parks their poison before any task starts', async () => {
    const late = [
      newcomer('late-1', ORDERS, 'poison'),
      newcomer('late-2'),
      newcomer('late-3', ORDERS, 'poison'),
    ];
    const w = world({ depth: 103, inDlq: 100, newcomers: { present: 103, late, toPark: 2 } });
    const ramp = await run(w.deps, 'start');
    expect(w.log).toEqual(['inventory']);
    expect([ramp.decision, ramp.lateArrivals, ramp.baseline, ramp.taskHandle]).toEqual([
      'park',
      3,
      101,
      null,
    ]);
    expect(ramp.why).toMatchObject({ code: 'late-to-park', late: 3, toPark: 2 });
  });

  it('N02 starts right after the inventory when no late arrival needs parking', async () => {
    const w = world({ depth: 101, inDlq: 100, newcomers: { present: 101, late: [newcomer('late-1')] } });
    const ramp = await run(w.deps, 'start');
    expect(w.log).toEqual(['inventory', 'intent 1 @5', 'start 5', 'handle 1 H1']);
    expect([ramp.decision, ramp.lateArrivals, ramp.baseline]).toEqual(['hold', 1, 101]);
  });

  it('halts instead of starting when the inventory cannot see the whole DLQ (re-inflow and late arrivals cannot be told apart)', async () => {
    const w = world({
      depth: 120,
      inDlq: 100,
      newcomers: { partial: true, partialReason: 'the inventory stopped (time) after 90 message(s)' },
    });
    const ramp = await run(w.deps, 'start');
    expect(ramp.decision).toBe('halt');
    expect(ramp.why).toMatchObject({
      code: 'inventory-partial',
      detail: 'the inventory stopped (time) after 90 message(s)',
    });
    expect(w.log).not.toContain('start 5');
  });

  it('C06 refuses a move task someone started by hand (console) instead of adopting it, and names its handle', async () => {
    const w = world({ depth: 300 });
    w.state.tasks = [task({ taskHandle: 'H-console', rate: 5, startedAt: T0 - 8000, moved: 7 })];
    const ramp = await run(w.deps, 'start');
    expect(ramp.decision).toBe('refuse');
    expect(ramp.why).toMatchObject({ code: 'foreign-task', taskHandle: 'H-console' });
    expect(w.log).toEqual([]);
  });

  it('adopts the task an earlier attempt started when it crashed between the call and recording the handle (Lambda.Unknown)', async () => {
    const w = world({ depth: 300 });
    w.state.record = intentOfFirstStart();
    w.state.tasks = [task({ taskHandle: 'H-ours', startedAt: T0 + 400 })];
    w.state.now = T0 + 30_000;
    const ramp = await run(w.deps, 'start');
    expect([ramp.decision, ramp.taskHandle]).toEqual(['hold', 'H-ours']);
    expect(w.log).toEqual(['handle 1 H-ours']);
  });

  it("does not adopt on a retry a same-rate task that started before the recorded intent: it is someone else's", async () => {
    const w = world({ depth: 300 });
    w.state.record = intentOfFirstStart();
    w.state.tasks = [task({ taskHandle: 'H-console', startedAt: T0 - 10_000 })];
    const ramp = await run(w.deps, 'start');
    expect([ramp.decision, ramp.taskHandle]).toEqual(['refuse', null]);
    expect(ramp.why).toMatchObject({ code: 'foreign-task', taskHandle: 'H-console' });
  });

  it('takes the task its own first call started when the SDK repeated that call and SQS refused the repeat', async () => {
    const w = world({ depth: 300 });
    w.deps.moveTasks.start = async ({ rate }) => {
      w.log.push(`start ${rate}`);
      w.state.tasks.unshift(task({ taskHandle: 'H-first-call', startedAt: w.state.now + 100 }));
      return { ok: false, code: 'TASK_ACTIVE', refusal: 'redrive refused: task H-first-call already active' };
    };
    const ramp = await run(w.deps, 'start');
    expect([ramp.decision, ramp.taskHandle]).toEqual(['hold', 'H-first-call']);
    expect(w.log).toEqual(['intent 1 @5', 'start 5', 'handle 1 H-first-call']);
  });
});

describe('CheckProgress: the health gate by accounting', () => {
  it('steps up when the DLQ holds exactly what the plan has left to move', async () => {
    const w = world({ depth: 300 });
    const ramp = await started(w, 40);
    const out = await run(w.deps, 'check', ramp);
    expect([out.decision, out.depth, out.excess, out.cleanMoved]).toEqual(['step-up', 260, 0, 40]);
  });

  it('sees re-inflow that sits behind the backlog: cancels the task, inventories, halts and names the source that broke', async () => {
    const w = world({
      depth: 300,
      newcomers: { present: 212, returned: [newcomer('r1'), newcomer('r2'), newcomer('r3', PAYMENTS)] },
    });
    const ramp = await started(w, 40);
    const clean = await run(w.deps, 'check', ramp);
    expect(clean.decision).toBe('step-up');
    // 50 more moved; 3 of them come back behind the 210 still to move.
    (w.state.tasks[0] as MoveTask).moved = 90;
    w.state.depth = 210 + 3;
    w.state.now += 60_000;
    const out = await run(w.deps, 'check', { ...clean, decision: 'hold' });
    expect(w.log.slice(-2)).toEqual(['cancel H1', 'inventory']);
    expect([out.decision, out.excess, out.reinflow]).toEqual(['halt', 3, 3]);
    expect(out.reinflowBySource).toEqual({ [ORDERS]: 2, [PAYMENTS]: 1 });
    // The bound: 5 msg/s in force from one return window (12 s) before the clean check, 60 s ago
    // (360 by the rate), capped by what the task moved in all (90).
    expect(out.exposure).toMatchObject({ returned: 3, atRisk: 50, bound: 90 });
    expect(out.exposure.basis.terms).toEqual([{ rate: 5, seconds: 72, messages: 90 }]);
    expect(out.why).toMatchObject({
      code: 'reinflow',
      returned: 3,
      bySource: { [ORDERS]: 2, [PAYMENTS]: 1 },
      moved: 90,
      atRisk: 50,
      after: { code: 'excess', depth: 213, expected: 210, excess: 3 },
    });
  });

  it('N02 holds the ramp for late arrivals found during it, parks their poison and then resumes at the same rate', async () => {
    const w = world({
      depth: 300,
      newcomers: { present: 262, late: [newcomer('l1', ORDERS, 'poison'), newcomer('l2')], toPark: 1 },
    });
    const ramp = await started(w, 40);
    w.state.depth = 262;
    const out = await run(w.deps, 'check', ramp);
    expect([out.decision, out.lateArrivals, out.baseline, out.taskHandle]).toEqual(['park', 2, 301, null]);
    // Park took the poison one out; ResumeRamp starts the same rate again.
    w.state.depth = 261;
    const resumed = await run(w.deps, 'resume', out);
    expect([resumed.decision, resumed.rate, resumed.taskHandle, resumed.starts, resumed.movedBefore]).toEqual(
      ['hold', 5, 'H2', 2, 40],
    );
  });

  it('never hides re-inflow in a new baseline: a step-up checks the accounting before the next task starts', async () => {
    const w = world({ depth: 300, newcomers: { present: 262, returned: [newcomer('r1'), newcomer('r2')] } });
    const ramp = await started(w, 40);
    const healthy = await run(w.deps, 'check', ramp);
    w.state.depth = 262; // two moved messages came back while the step-up cancelled the task
    const out = await run(w.deps, 'step-up', healthy);
    expect(w.log.filter((l) => l.startsWith('start'))).toEqual(['start 5']);
    expect([out.decision, out.reinflow]).toEqual(['halt', 2]);
  });

  it('is not complete when the task completes: it waits one return window, then checks the accounting once more', async () => {
    const w = world({ depth: 300 });
    const ramp = await started(w, 0);
    Object.assign(w.state.tasks[0] as MoveTask, { status: 'COMPLETED', taskHandle: null, moved: 300 });
    w.state.depth = 0;
    const waiting = await run(w.deps, 'check', ramp);
    expect([waiting.decision, waiting.dwellSeconds, waiting.drainUntil]).toEqual([
      'hold',
      WINDOW,
      w.state.now + WINDOW * 1000,
    ]);
    expect(waiting.why).toMatchObject({ code: 'drain-wait', returnWindowSeconds: WINDOW });
    w.state.now += WINDOW * 1000;
    const done = await run(w.deps, 'check', waiting);
    expect([done.decision, done.movedBefore]).toEqual(['done', 300]);
    expect(done.why).toMatchObject({ code: 'done', returnWindowSeconds: WINDOW });
  });

  it('halts when moved messages come back during the last return window', async () => {
    const w = world({
      depth: 300,
      newcomers: { present: 4, returned: [1, 2, 3, 4].map((i) => newcomer(`r${i}`)) },
    });
    const ramp = await started(w, 0);
    Object.assign(w.state.tasks[0] as MoveTask, { status: 'COMPLETED', taskHandle: null, moved: 300 });
    w.state.depth = 0;
    const waiting = await run(w.deps, 'check', ramp);
    w.state.now += WINDOW * 1000;
    w.state.depth = 4;
    const out = await run(w.deps, 'check', waiting);
    expect([out.decision, out.reinflow, out.excess]).toEqual(['halt', 4, 4]);
  });

  it('stops an idle task once the DLQ is empty and waits out the return window', async () => {
    const w = world({ depth: 50 });
    const ramp = await started(w, 50);
    const out = await run(w.deps, 'check', ramp);
    expect(w.log.at(-1)).toBe('cancel H1');
    expect([out.decision, out.taskHandle, out.movedBefore, out.dwellSeconds]).toEqual([
      'hold',
      null,
      50,
      WINDOW,
    ]);
  });

  it('holds instead of stepping up while the source backlog grows', async () => {
    const w = world({ depth: 300, backlog: 5 * 60 * 2 + 1 });
    const out = await run(w.deps, 'check', await started(w, 40));
    expect(out.decision).toBe('hold');
    expect(out.why).toEqual({ code: 'backlog', backlog: 601, limit: 600, factor: 2, rate: 5 });
  });

  it('keeps the plan dwell at the top rate, so the exposure window stays one dwell and one return window', async () => {
    const w = world({ depth: 200_000 });
    const top = { ...(await started(w, 0)), rateIndex: 2, rate: 200 };
    (w.state.tasks[0] as MoveTask).rate = 200;
    const out = await run(w.deps, 'check', top);
    expect([out.decision, out.dwellSeconds]).toEqual(['hold', 60]);
  });

  it('N04 lengthens the top-rate dwell only as far as the remaining gate checks require', async () => {
    const w = world({ depth: 200_000 });
    const top = { ...(await started(w, 0)), rateIndex: 2, rate: 200 };
    (w.state.tasks[0] as MoveTask).rate = 200;
    // 200,000 messages at 200 msg/s are 1000 s of moving. With 100 checks allowed (20 kept in
    // reserve): after 61 checks, 19 are left, 53 s each, under the plan's 60 s; after 76, 4 are left.
    const roomy = await run({ ...w.deps, maxChecks: 100 }, 'check', { ...top, checks: 60 });
    const tight = await run({ ...w.deps, maxChecks: 100 }, 'check', { ...top, checks: 75 });
    expect(roomy.dwellSeconds).toBe(60);
    expect(tight.dwellSeconds).toBe(250);
  });

  it('N04 stops at the bound of gate checks: cancels the task and halts, so Reconcile and Notify still run', async () => {
    const w = world({ depth: 300, backlog: 10_000 });
    const ramp = await started(w, 10);
    const out = await run(w.deps, 'check', { ...ramp, checks: MAX_GATE_CHECKS });
    expect(w.log.at(-1)).toBe('cancel H1');
    expect([out.decision, out.movedBefore]).toEqual(['halt', 10]);
    expect(out.why).toMatchObject({ code: 'check-bound', maxChecks: MAX_GATE_CHECKS });
  });

  it('C06 refuses, never supervises, a task someone else started after ours ended', async () => {
    const w = world({ depth: 300 });
    const ramp = await started(w, 0);
    Object.assign(w.state.tasks[0] as MoveTask, { status: 'COMPLETED', taskHandle: null, moved: 100 });
    w.state.tasks.unshift(task({ taskHandle: 'H-console', rate: 20, startedAt: w.state.now }));
    const out = await run(w.deps, 'check', ramp);
    expect(out.decision).toBe('refuse');
    expect(out.why).toMatchObject({ code: 'foreign-task', taskHandle: 'H-console' });
    expect(w.log).not.toContain('cancel H-console');
  });

  it('C06 halts on FAILED with FailureReason and the number moved', async () => {
    const w = world({ depth: 10 });
    const ramp = await started(w, 0);
    Object.assign(w.state.tasks[0] as MoveTask, {
      status: 'FAILED',
      taskHandle: null,
      moved: 3,
      toMove: 10,
      failureReason: 'AWS.SimpleQueueService.NonExistentQueue',
    });
    const out = await run(w.deps, 'check', ramp);
    expect([out.decision, out.failureReason, out.movedBefore]).toEqual([
      'halt',
      'AWS.SimpleQueueService.NonExistentQueue',
      3,
    ]);
    expect(out.why).toMatchObject({ code: 'task-failed', moved: 3, toMove: 10 });
  });

  it('halts when someone cancelled the task outside the workflow', async () => {
    const w = world({ depth: 10 });
    const ramp = await started(w, 0);
    Object.assign(w.state.tasks[0] as MoveTask, { status: 'CANCELLED', taskHandle: null });
    const out = await run(w.deps, 'check', ramp);
    expect([out.decision, out.why]).toEqual(['halt', { code: 'task-cancelled-outside', moved: 0 }]);
  });
});

describe('StepUp', () => {
  it('cancels, waits until the task is no longer active, then starts the next rate with the moved count carried over', async () => {
    const w = world({ depth: 300 });
    const ramp = await started(w, 40);
    const out = await run(w.deps, 'step-up', await run(w.deps, 'check', ramp));
    expect(w.log.slice(-4)).toEqual(['cancel H1', 'intent 2 @50', 'start 50', 'handle 2 H2']);
    expect([out.decision, out.rateIndex, out.rate, out.movedBefore, out.starts]).toEqual([
      'hold',
      1,
      50,
      40,
      2,
    ]);
  });

  it('a retried StepUp adopts the task its first attempt started instead of starting a second one', async () => {
    const w = world({ depth: 300 });
    const ramp = await started(w, 40);
    const healthy = await run(w.deps, 'check', ramp);
    await run(w.deps, 'step-up', healthy); // the attempt whose result was lost (Lambda.Unknown)
    const retried = await run(w.deps, 'step-up', healthy);
    expect(w.log.filter((l) => l.startsWith('start'))).toEqual(['start 5', 'start 50']);
    expect([retried.decision, retried.taskHandle, retried.rate, retried.movedBefore]).toEqual([
      'hold',
      'H2',
      50,
      40,
    ]);
  });

  it('leaves the restart pending when the cancelled task is still CANCELLING after the wait', async () => {
    const w = world({ depth: 300 });
    const ramp = await started(w, 40);
    w.deps.moveTasks.cancel = async () => {
      Object.assign(w.state.tasks[0] as MoveTask, { status: 'CANCELLING', taskHandle: null });
      return { cancelled: true, moved: 40 };
    };
    const out = await run({ ...w.deps, cancelWaitMs: 0 }, 'step-up', ramp);
    expect([out.decision, out.pendingRateIndex, out.status]).toEqual(['hold', 1, 'CANCELLING']);
  });
});
