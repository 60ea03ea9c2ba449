/**
 * The ramp policy both redrive engines follow (the move-task ramp, functions/move-task, and the
 * recording mover, functions/mover): the plan, the ramp's state and a measurement in; out a
 * verdict (step up, hold, drain, examine, halt, park, start, done), the next rate and dwell, the
 * exposure with its bound and basis, and a typed reason. Pure: no I/O, the time is an input. The
 * engines measure, call it and act. docs/redrive-workflow.md ("The ramp") explains the rest.
 */
import type { ExposureTerm, RampExposure, RampReason } from '#platform/reasons.js';
import * as z from '#platform/zod.js';
import { checkRampRates } from './redrive-plan.js';

/** StartMessageMoveTask's MaxNumberOfMessagesPerSecond limit; the mover keeps to it too. */
export const MAX_RAMP_RATE = 500;
/**
 * Most gate checks one execution makes. Step Functions ends a Standard execution at 25,000 history
 * events, uncatchably. A gate loop is Dwell (Wait: 2 events), CheckProgress (Task: 5) and
 * RampDecision? (Choice: 2); a step-up adds StepUp (5) and a Choice (2): 16 at most. 1,500 loops
 * are 24,000 events at that worst, leaving 1,000 for the states before and after the ramp.
 */
export const MAX_GATE_CHECKS = 1500;
/**
 * Most mover steps of one execution: MoverStep (Task: 5 events) and MoverDecision? (Choice: 2), a
 * drain adds a Wait (2): 1,500 steps stay under 14,000 events.
 */
export const MAX_MOVER_STEPS = 1500;
/** Longest dwell, seconds. */
export const MAX_DWELL = 3600;
/** Dwell while SQS catches up (a task stopping, a task not listed yet), seconds at most. */
export const SHORT_DWELL = 10;
/** Restarts for messages a completed task left behind (held by another receiver at its start). */
export const MAX_LEFTOVER_RESTARTS = 3;
/** Checks kept in reserve when sizing the top-rate dwell from the remaining budget. */
const RESERVED_CHECKS = 20;

const count = z.number().check(z.int(), z.gte(0));
const isObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A rate in force from `since` (epoch ms) until the next segment (0: nothing moving), and the run's
 * moved total when it began (so a term never counts more than the segment really moved).
 */
export const RateSegment = z.object({
  since: z.number(),
  rate: z.number().check(z.gte(0)),
  movedAtStart: z._default(z.number(), 0),
});
export type RateSegment = z.infer<typeof RateSegment>;

/** The ramp's state, shared by both engines (`$.ramp`; each engine adds its own fields). */
export const RampState = z.looseObject({
  /** The engine's decision (its ASL Choice routes on it). */
  decision: z._default(z.string(), 'start'),
  rateIndex: z._default(count, 0),
  rate: z._default(z.number().check(z.gte(0)), 0),
  /** How long a redriven message that fails again takes to come back, seconds. */
  returnWindowSeconds: z._default(z.number().check(z.gte(0)), 0),
  /** Epoch ms: everything is moved; `done` once the return window has passed. */
  drainUntil: z._default(z.nullable(z.number()), null),
  /** Messages the ramp must move (the DLQ's depth at the first start + accepted late arrivals). */
  baseline: z._default(z.nullable(count), null),
  /** Moved total at the last check that found nothing back, and when (epoch ms). */
  cleanMoved: z._default(z.number(), 0),
  cleanAt: z._default(z.nullable(z.number()), null),
  /** The rates in force, oldest first (only those the exposure window still needs). */
  rates: z._default(z.array(RateSegment), []),
  /** Messages of this run found back in the DLQ, and by the source queue they came back from. */
  reinflow: z._default(count, 0),
  reinflowBySource: z._default(z.record(z.string(), z.number()), {}),
  lateArrivals: z._default(count, 0),
  exposure: z._default(z.custom<RampExposure>(isObject), () => noExposure(0)),
  /** The largest bound of the run so far: the report's exposure bound. */
  exposurePeak: z._default(z.custom<Pick<RampExposure, 'bound' | 'basis'>>(isObject), () => noExposure(0)),
  /** Why the last step decided what it did (reasons-text.ts renders it as `reason`). */
  why: z._default(z.nullable(z.custom<RampReason>(isObject)), null),
  reason: z._default(z.string(), ''),
});
export type RampState = z.infer<typeof RampState>;

/** State fields a verdict sets (never the engine's decision). */
export type RampPatch = Partial<Omit<RampState, 'decision'>>;

/** The plan's part the policy reads. */
export interface RampPlan {
  rampRates: readonly number[];
  /** Seconds per step. */
  dwellSeconds: number;
}

/** Which engine asks: they detect re-inflow differently, so they step up on different evidence. */
export type RampEngine = 'move-task' | 'mover';

/** What the policy decided. */
export type RampAction =
  | 'step-up'
  | 'hold'
  | 'drain'
  | 'examine'
  | 'stop-and-drain'
  | 'halt'
  | 'park'
  | 'start'
  | 'done'
  | 'refuse'
  | 'cancelled';

/** A decision: the action, the rate and dwell that follow, the exposure, why, and the state fields it sets. */
export interface RampVerdict {
  action: RampAction;
  rateIndex: number;
  rate: number;
  /** Seconds until the next check. */
  dwellSeconds: number;
  exposure: RampExposure;
  why: RampReason;
  /** Fields of the state this verdict sets (the engine merges them). */
  patch: RampPatch;
}

const TERMINAL = new Set(['halt', 'done', 'refuse', 'cancelled']);

function noExposure(now: number): RampExposure {
  return {
    returned: 0,
    atRisk: 0,
    bound: 0,
    basis: { returnWindowSeconds: 0, cleanAt: null, from: now, to: now, terms: [] },
  };
}

/** The rate of `rateIndex`, or why it may not run (not in the plan, not an integer 1..500). */
export function rateAt(plan: RampPlan, rateIndex: number): { rate: number } | { refused: string } {
  const rate = plan.rampRates[rateIndex];
  if (rate === undefined) return { refused: `rampRates[${rateIndex}]: the plan has no such rate` };
  const problem = checkRampRates([rate])[0];
  return problem ? { refused: problem.message } : { rate };
}

/**
 * The state with `rate` in force from `at` (epoch ms), the run having moved `moved` by then;
 * segments the exposure window no longer needs are dropped.
 */
export function rateInForce(
  state: RampState,
  rate: number,
  at: number,
  moved: number,
): Pick<RampState, 'rates'> {
  const last = state.rates.at(-1);
  if (last && last.rate === rate) return { rates: state.rates };
  const from = windowStart(state, at);
  const kept = state.rates.filter((_, i) => (state.rates[i + 1]?.since ?? at) > from);
  return { rates: [...kept, { since: at, rate, movedAtStart: moved }] };
}

function windowStart(state: RampState, now: number): number {
  const start = state.cleanAt ?? state.rates[0]?.since ?? now;
  return start - state.returnWindowSeconds * 1000;
}

/**
 * The exposure now: what came back, what moved since the last clean check, and the bound: every
 * message the rates in force could move from one return window before the last clean check (a
 * message moved earlier that failed would have been back by that check) until now.
 * @param moved - the run's moved total now; `returned` - messages of the run found back.
 */
export function exposureOf(state: RampState, now: number, moved: number, returned: number): RampExposure {
  // `moved` is the run's total now: the last segment moved what the run moved since it began.
  const from = windowStart(state, now);
  const terms: ExposureTerm[] = [];
  state.rates.forEach((s, i) => {
    const next = state.rates[i + 1];
    const start = Math.max(s.since, from);
    const end = Math.min(next?.since ?? now, now);
    if (s.rate <= 0 || end <= start) return;
    const seconds = (end - start) / 1000;
    // The rate caps what the segment could move; what it did move (the task's or the mover's own
    // count) caps it too: a task starts after it is asked for and stops after it is cancelled.
    const byRate = Math.ceil(s.rate * seconds - 1e-9);
    const movedInSegment = Math.max(0, (next?.movedAtStart ?? moved) - s.movedAtStart);
    terms.push({ rate: s.rate, seconds, messages: Math.min(byRate, movedInSegment) });
  });
  const bound = terms.reduce((n, t) => n + t.messages, 0);
  return {
    returned,
    atRisk: Math.max(0, moved - state.cleanMoved),
    bound,
    basis: {
      returnWindowSeconds: state.returnWindowSeconds,
      cleanAt: state.cleanAt,
      from,
      to: now,
      terms,
    },
  };
}

function verdict(
  plan: RampPlan,
  state: RampState,
  at: { now: number; moved: number; returned?: number },
  action: RampAction,
  why: RampReason,
  patch: RampPatch = {},
  dwellSeconds = plan.dwellSeconds,
): RampVerdict {
  const next = { ...state, ...patch };
  const exposure = exposureOf(next, at.now, at.moved, at.returned ?? 0);
  const peak = exposure.bound > state.exposurePeak.bound ? exposure : state.exposurePeak;
  return {
    action,
    rateIndex: next.rateIndex,
    rate: plan.rampRates[next.rateIndex] ?? next.rate,
    dwellSeconds: Math.min(MAX_DWELL, Math.max(1, Math.ceil(dwellSeconds))),
    exposure,
    why,
    patch: { ...patch, exposure, exposurePeak: { bound: peak.bound, basis: peak.basis } },
  };
}

/** A halted (or done, refused, cancelled) ramp stays so: the policy never restarts it. */
function ended(plan: RampPlan, state: RampState, now: number, moved: number): RampVerdict | null {
  if (!TERMINAL.has(state.decision)) return null;
  const action: RampAction = state.decision === 'done' ? 'done' : 'halt';
  return verdict(
    plan,
    state,
    { now, moved, returned: state.reinflow },
    action,
    state.why ?? { code: 'no-task' },
  );
}

/** What an event the engine observed (not a measurement the gate weighs) means for the ramp. */
const EVENT_ACTIONS: Partial<Record<RampReason['code'], RampAction>> = {
  'foreign-task': 'refuse',
  'ambiguous-tasks': 'refuse',
  cancelled: 'cancelled',
  'task-status': 'hold',
  'task-not-listed-yet': 'hold',
  'cancelled-task-stopping': 'hold',
  'step-up-waits': 'hold',
  'examine-pending': 'hold',
  'empty-task-stopping': 'hold',
};

/**
 * An event the engine observed: a task the run did not start refuses the run, a person's cancel
 * cancels it, SQS catching up holds briefly, and anything else (a task FAILED or cancelled outside
 * the workflow, a task gone, a start SQS refused, a failed step) halts it.
 */
export function eventVerdict(
  plan: RampPlan,
  state: RampState,
  m: { now: number; moved: number },
  why: RampReason,
  patch: RampPatch = {},
): RampVerdict {
  const action = EVENT_ACTIONS[why.code] ?? 'halt';
  return verdict(
    plan,
    state,
    m,
    action,
    why,
    patch,
    action === 'hold' ? shortDwell(plan) : plan.dwellSeconds,
  );
}

/** A short dwell while SQS catches up. */
export const shortDwell = (plan: RampPlan) => Math.min(plan.dwellSeconds, SHORT_DWELL);

/** The dwell before a new task's first check: one return window at least, so its first messages could come back. */
export function firstCheckDwell(plan: RampPlan, state: RampState): number {
  return Math.min(MAX_DWELL, Math.max(plan.dwellSeconds, Math.ceil(state.returnWindowSeconds)));
}

/** A gate check over the bound of checks per execution halts the ramp. */
export function checkBound(
  plan: RampPlan,
  state: RampState,
  m: { now: number; moved: number; checks: number; maxChecks: number },
): RampVerdict | null {
  if (m.checks <= m.maxChecks) return null;
  return verdict(plan, state, m, 'halt', { code: 'check-bound', maxChecks: m.maxChecks, moved: m.moved });
}

/** The accounting of a move-task check: DLQ depth against what the plan has left to move. */
export interface Accounting {
  now: number;
  /** The run's moved total. */
  moved: number;
  /** DLQ depth: visible + in flight + delayed. */
  depth: number;
  /** What the ramp must move in all. */
  baseline: number;
  /** Visible messages in the source queues, or null when not measured. */
  backlog: number | null;
  checks: number;
  maxChecks: number;
  /** Source backlog above rate x dwell x this holds the ramp. */
  backlogFactor: number;
}

/**
 * The health gate of a running move task. An excess (the DLQ holds more than the plan has left to
 * move) is examined; a negative one reads as healthy. Healthy and below the top rate: step up.
 */
export function gateVerdict(plan: RampPlan, state: RampState, m: Accounting): RampVerdict {
  const done = ended(plan, state, m.now, m.moved);
  if (done) return done;
  const expected = m.baseline - m.moved;
  const excess = m.depth - expected;
  if (excess > 0)
    return verdict(plan, state, m, 'examine', { code: 'excess', depth: m.depth, expected, excess });
  const clean: RampPatch = { cleanMoved: m.moved, cleanAt: m.now };
  if (m.depth === 0) return verdict(plan, state, m, 'stop-and-drain', { code: 'empty-task-stopping' }, clean);
  const limit = state.rate * plan.dwellSeconds * m.backlogFactor;
  if (m.backlog !== null && m.backlog > limit)
    return verdict(
      plan,
      state,
      m,
      'hold',
      { code: 'backlog', backlog: m.backlog, limit, factor: m.backlogFactor, rate: state.rate },
      clean,
    );
  const top = plan.rampRates.length - 1;
  if (state.rateIndex < top)
    return verdict(
      plan,
      state,
      m,
      'step-up',
      {
        code: 'healthy',
        rate: state.rate,
        moved: m.moved,
        nextRate: plan.rampRates[state.rateIndex + 1] as number,
      },
      clean,
    );
  // Top rate: the plan's dwell, longer only as far as the remaining gate checks require.
  const checksLeft = Math.max(1, m.maxChecks - m.checks - RESERVED_CHECKS);
  const secondsLeft = Math.ceil(expected / Math.max(1, state.rate));
  return verdict(
    plan,
    state,
    m,
    'hold',
    { code: 'healthy-top', rate: state.rate, moved: m.moved, baseline: m.baseline },
    clean,
    Math.max(plan.dwellSeconds, Math.ceil(secondsLeft / checksLeft)),
  );
}

/**
 * Before a task starts (the first, a step-up, a resume): the accounting first, so re-inflow never
 * hides in a new baseline. Excess: examine; nothing left: drain; else start at `rateIndex`.
 */
export function startVerdict(
  plan: RampPlan,
  state: RampState,
  m: { now: number; moved: number; depth: number; baseline: number },
  rateIndex: number,
): RampVerdict {
  const expected = m.baseline - m.moved;
  const excess = m.depth - expected;
  if (excess > 0)
    return verdict(
      plan,
      state,
      m,
      'examine',
      { code: 'excess', depth: m.depth, expected, excess },
      { rateIndex },
    );
  if (m.depth === 0) return verdict(plan, state, m, 'drain', { code: 'empty-task-stopping' });
  return startAt(plan, state, m, rateIndex);
}

/** Start at `rateIndex`: halts when the rate may not run. */
export function startAt(
  plan: RampPlan,
  state: RampState,
  m: { now: number; moved: number },
  rateIndex: number,
): RampVerdict {
  const rate = rateAt(plan, rateIndex);
  if ('refused' in rate)
    return verdict(plan, state, m, 'halt', { code: 'rate-refused', detail: rate.refused });
  return verdict(
    plan,
    state,
    m,
    'start',
    { code: 'task-started', taskHandle: '', rate: rate.rate, by: 'started' },
    { rateIndex, rate: rate.rate, drainUntil: null },
    firstCheckDwell(plan, state),
  );
}

/** True while a drain waits out the return window (no measurement needed). */
export const drainWaiting = (state: RampState, now: number) =>
  state.drainUntil === null || now < state.drainUntil;

/**
 * Everything is moved and nothing moves: hold one return window after the last move, then account
 * once more: excess is examined, messages left behind are moved again (a few times), else done.
 * @param m.depth - the DLQ depth, measured once the window has passed (null while waiting).
 */
export function drainVerdict(
  plan: RampPlan,
  state: RampState,
  m: { now: number; moved: number; depth: number | null; baseline: number | null; leftoverRestarts: number },
): RampVerdict {
  if (drainWaiting(state, m.now) || m.depth === null) {
    const until = state.drainUntil ?? m.now + state.returnWindowSeconds * 1000;
    const secondsLeft = Math.ceil((until - m.now) / 1000);
    return verdict(
      plan,
      state,
      m,
      'hold',
      { code: 'drain-wait', moved: m.moved, secondsLeft, returnWindowSeconds: state.returnWindowSeconds },
      { drainUntil: until },
      Math.max(1, secondsLeft),
    );
  }
  const excess = m.depth - ((m.baseline ?? m.depth + m.moved) - m.moved);
  if (excess > 0)
    return verdict(
      plan,
      state,
      m,
      'examine',
      { code: 'excess-after-window', depth: m.depth, excess },
      { drainUntil: null },
    );
  if (m.depth > 0 && m.leftoverRestarts < MAX_LEFTOVER_RESTARTS) {
    const again = startAt(plan, state, m, state.rateIndex);
    return again.action === 'start'
      ? { ...again, why: { code: 'leftover', depth: m.depth, next: again.why } }
      : again;
  }
  return verdict(
    plan,
    state,
    m,
    'done',
    { code: 'done', moved: m.moved, returnWindowSeconds: state.returnWindowSeconds, left: m.depth },
    { cleanMoved: m.moved, cleanAt: m.now },
  );
}

/** What an inventory of the DLQ found (late-arrivals.ts `Newcomers`, counted). */
export interface InventoryFindings {
  now: number;
  moved: number;
  /** Why the inventory cannot tell re-inflow from late arrivals, else null. */
  partial: string | null;
  /** An extended-client payload that could not be checked, else null. */
  payloadRefusal: string | null;
  returned: number;
  returnedBySource: Record<string, number>;
  late: number;
  present: number;
  toPark: number;
  baseline: number | null;
}

/**
 * After an inventory (no task running): re-inflow halts, late poison is parked, else the ramp
 * resumes at its rate. `after` is the accounting that called for the inventory.
 */
export function inventoryVerdict(
  plan: RampPlan,
  state: RampState,
  m: InventoryFindings,
  after: RampReason | null,
): RampVerdict {
  const base = { now: m.now, moved: m.moved };
  if (m.partial !== null)
    return verdict(plan, state, base, 'halt', {
      code: 'inventory-partial',
      moved: m.moved,
      detail: m.partial,
      after,
    });
  if (m.payloadRefusal !== null)
    return verdict(plan, state, base, 'halt', {
      code: 'payload-unchecked',
      moved: m.moved,
      detail: m.payloadRefusal,
      after,
    });
  if (m.returned > 0) {
    const exposure = exposureOf(state, m.now, m.moved, m.returned);
    return verdict(
      plan,
      state,
      { ...base, returned: m.returned },
      'halt',
      {
        code: 'reinflow',
        returned: m.returned,
        bySource: m.returnedBySource,
        moved: m.moved,
        baseline: m.baseline,
        atRisk: exposure.atRisk,
        after,
      },
      {
        reinflow: m.returned,
        reinflowBySource: m.returnedBySource,
        lateArrivals: state.lateArrivals + m.late,
      },
    );
  }
  const patch: RampPatch = {
    lateArrivals: state.lateArrivals + m.late,
    baseline: m.moved + m.present - m.toPark,
    cleanMoved: m.moved,
    cleanAt: m.now,
  };
  if (m.toPark > 0)
    return verdict(
      plan,
      state,
      base,
      'park',
      { code: 'late-to-park', late: m.late, toPark: m.toPark, rate: state.rate, after },
      patch,
    );
  const resumed = startAt(plan, { ...state, ...patch }, base, state.rateIndex);
  return {
    ...resumed,
    patch: { ...patch, ...resumed.patch },
    why:
      resumed.action === 'start'
        ? { code: 'late-none-to-park', late: m.late, after, next: resumed.why }
        : resumed.why,
  };
}

/** What one mover step measured: its pass over the queue, exact about re-inflow. */
export interface PassMeasurement {
  now: number;
  /** When the pass began, epoch ms. */
  passStartedAt: number;
  /** The run's moved total after the pass, and what this pass moved. */
  moved: number;
  passMoved: number;
  returned: number;
  returnedBySource: Record<string, number>;
  sendFailures: readonly string[];
  /** The pass saw the whole queue (it ended on empty receives, not on a limit). */
  complete: boolean;
  /** Messages in flight in the queue (measured when the pass moved nothing), else null. */
  inFlight: number | null;
  lastSentAt: number | null;
  /** The mover's receive visibility timeout, seconds (how long in-flight messages stay hidden). */
  visibilitySeconds: number;
  queue: string;
  /** For the reasons: what the run selected and left. */
  selected: number;
  left: Record<string, number>;
  fifoHeld: number;
  notSelected: number;
  heldGroups: { groups: number; examples: string[] } | null;
}

/** Before a mover step passes: the step bound, and a drain that is still waiting. */
export function moverPreStep(
  plan: RampPlan,
  state: RampState,
  m: { now: number; moved: number; steps: number },
): RampVerdict | null {
  const done = ended(plan, state, m.now, m.moved);
  if (done) return done;
  if (m.steps > MAX_MOVER_STEPS)
    return verdict(plan, state, m, 'halt', { code: 'step-bound', maxSteps: MAX_MOVER_STEPS, moved: m.moved });
  if (state.drainUntil !== null && m.now < state.drainUntil) {
    const secondsLeft = Math.ceil((state.drainUntil - m.now) / 1000);
    return verdict(plan, state, m, 'drain', { code: 'mover-draining', secondsLeft }, {}, secondsLeft);
  }
  return null;
}

/** Messages a mover step may move at its rate in `seconds`: the rate holds to the last batch. */
export const stepBudget = (rate: number, seconds: number) => Math.max(1, Math.floor(rate * seconds));

/**
 * After a mover pass: re-inflow or a refused send halts; an empty complete pass drains (in-flight
 * messages first, then one return window after the last send) and then is done; else the mover goes
 * on, one rate up once a rate has held for a dwell and a return window.
 */
export function moverVerdict(plan: RampPlan, state: RampState, m: PassMeasurement): RampVerdict {
  const at = { now: m.now, moved: m.moved, returned: m.returned };
  // A complete pass that found nothing back proves every message moved a return window before it.
  const clean: RampPatch =
    m.complete && m.returned === 0 ? { cleanMoved: m.moved - m.passMoved, cleanAt: m.passStartedAt } : {};
  if (m.returned > 0) {
    const exposure = exposureOf(state, m.now, m.moved, m.returned);
    const bySource = { ...state.reinflowBySource };
    for (const [s, n] of Object.entries(m.returnedBySource)) bySource[s] = (bySource[s] ?? 0) + n;
    return verdict(
      plan,
      state,
      at,
      'halt',
      {
        code: 'reinflow',
        returned: m.returned,
        bySource,
        moved: m.moved,
        baseline: null,
        atRisk: exposure.atRisk,
        after: null,
      },
      { reinflow: state.reinflow + m.returned, reinflowBySource: bySource, drainUntil: null },
    );
  }
  if (m.sendFailures.length > 0)
    return verdict(plan, state, at, 'halt', {
      code: 'send-failed',
      count: m.sendFailures.length,
      examples: m.sendFailures.slice(0, 3),
      moved: m.moved,
    });
  if (m.complete && m.passMoved === 0) return moverEmptyPass(plan, state, m, clean);
  const windowMs = state.returnWindowSeconds * 1000;
  const rateSince = state.rates.at(-1)?.since ?? m.passStartedAt;
  const held = m.now - rateSince >= plan.dwellSeconds * 1000 + windowMs;
  const stepUp = held && state.rateIndex < plan.rampRates.length - 1;
  const rateIndex = stepUp ? state.rateIndex + 1 : state.rateIndex;
  return verdict(
    plan,
    state,
    at,
    stepUp ? 'step-up' : 'hold',
    {
      code: 'mover-moved',
      movedNow: m.passMoved,
      rate: state.rate,
      moved: m.moved,
      selected: m.selected,
      nextRate: stepUp ? (plan.rampRates[rateIndex] as number) : null,
      left: m.left,
    },
    { ...clean, rateIndex, drainUntil: null },
  );
}

function moverEmptyPass(plan: RampPlan, state: RampState, m: PassMeasurement, clean: RampPatch): RampVerdict {
  const at = { now: m.now, moved: m.moved };
  // An empty pass is not an empty queue while messages are in flight (an invocation that died
  // after its receives still hides them): wait one visibility timeout and pass again.
  if ((m.inFlight ?? 0) > 0)
    return verdict(
      plan,
      state,
      at,
      'drain',
      {
        code: 'in-flight',
        inFlight: m.inFlight ?? 0,
        queue: m.queue,
        waitSeconds: m.visibilitySeconds,
        moved: m.moved,
      },
      clean,
      m.visibilitySeconds,
    );
  const until = (m.lastSentAt ?? m.now) + state.returnWindowSeconds * 1000;
  if (state.drainUntil === null && m.now < until) {
    const secondsLeft = Math.max(1, Math.ceil((until - m.now) / 1000));
    return verdict(
      plan,
      state,
      at,
      'drain',
      {
        code: 'mover-drain-wait',
        moved: m.moved,
        secondsLeft,
        returnWindowSeconds: state.returnWindowSeconds,
      },
      { ...clean, drainUntil: until },
      secondsLeft,
    );
  }
  return verdict(
    plan,
    state,
    at,
    'done',
    {
      code: 'mover-done',
      moved: m.moved,
      left: m.left,
      fifoHeld: m.fifoHeld,
      notSelected: m.notSelected,
      returnWindowSeconds: state.returnWindowSeconds,
      heldGroups: m.heldGroups,
    },
    { ...clean, drainUntil: null },
  );
}
