/**
 * The ramp policy over random measurement sequences (fast-check, fixed seed): a simulated queue
 * moves at most the rate in force, the depth and findings are random, and after every verdict the
 * exposure it reports stays within the bound it states, rates come from the plan only, and a
 * halted ramp stays halted.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  drainVerdict,
  exposureOf,
  gateVerdict,
  inventoryVerdict,
  MAX_RAMP_RATE,
  moverVerdict,
  type RampPlan,
  RampState,
  type RampVerdict,
  rateInForce,
  startAt,
} from '#transfer/ramp-policy.js';

const SEED = 424242;
const RUNS = 200;

/** One random turn of the world between two verdicts. */
const Turn = fc.record({
  /** Fraction of rate x elapsed the queue moved (<= 1: the rate holds). */
  pace: fc.oneof(fc.constant(1), fc.double({ min: 0, max: 1, noNaN: true })),
  /** Extra seconds beyond the dwell before the next check. */
  late: fc.integer({ min: 0, max: 30 }),
  /** Depth offset from what the plan expects (positive: excess). */
  offset: fc.integer({ min: -20, max: 20 }),
  empty: fc.boolean(),
  backlog: fc.option(fc.integer({ min: 0, max: 5000 }), { nil: null }),
  returned: fc.integer({ min: 0, max: 5 }),
  late2: fc.integer({ min: 0, max: 5 }),
  toPark: fc.integer({ min: 0, max: 3 }),
  partial: fc.boolean(),
  complete: fc.boolean(),
  inFlight: fc.integer({ min: 0, max: 3 }),
});

const Plan = fc
  .uniqueArray(fc.integer({ min: 1, max: MAX_RAMP_RATE }), { minLength: 1, maxLength: 5 })
  .chain((rates) =>
    fc.record({
      rampRates: fc.constant([...rates].sort((a, b) => a - b)),
      dwellSeconds: fc.integer({ min: 1, max: 120 }),
      returnWindowSeconds: fc.integer({ min: 0, max: 300 }),
    }),
  );

type Sim = { state: RampState; now: number; moved: number; baseline: number; halted: boolean };

/** Applies a verdict: the state fields, the rate in force (0 once the engine stops moving). */
function apply(sim: Sim, plan: RampPlan, v: RampVerdict, decision: string): void {
  const current = sim.state.rates.at(-1)?.rate ?? 0;
  const rate = v.action === 'start' ? v.rate : v.action === 'hold' || v.action === 'step-up' ? current : 0;
  sim.state = { ...sim.state, ...v.patch, decision, rateIndex: v.rateIndex, rate: v.rate, why: v.why };
  sim.state = { ...sim.state, ...rateInForce(sim.state, rate, sim.now, sim.moved) };
  if (v.action === 'step-up') {
    const next = startAt(plan, sim.state, sim, sim.state.rateIndex + 1);
    check(plan, next, sim);
    sim.state = { ...sim.state, ...next.patch, rateIndex: next.rateIndex, rate: next.rate };
    sim.state = { ...sim.state, ...rateInForce(sim.state, next.rate, sim.now, sim.moved) };
  }
}

function check(plan: RampPlan, v: RampVerdict, sim: Sim): void {
  expect(v.exposure.atRisk).toBeLessThanOrEqual(v.exposure.bound);
  expect(plan.rampRates).toContain(v.rate);
  expect(v.rate).toBeLessThanOrEqual(MAX_RAMP_RATE);
  expect(v.dwellSeconds).toBeGreaterThanOrEqual(1);
  expect(v.dwellSeconds).toBeLessThanOrEqual(3600);
  expect(v.exposure.bound).toBe(exposureOf({ ...sim.state, ...v.patch }, sim.now, sim.moved, 0).bound);
}

/** Time passes at the rate in force; the queue moves at most that. */
function advance(sim: Sim, seconds: number, pace: number): void {
  const rate = sim.state.rates.at(-1)?.rate ?? 0;
  sim.now += seconds * 1000;
  sim.moved = Math.min(sim.baseline, sim.moved + Math.floor(rate * seconds * pace));
}

describe('ramp policy (property)', () => {
  it('move-task gate: the exposure it reports never exceeds its bound; rates only from the plan; halt is sticky', () => {
    fc.assert(
      fc.property(
        Plan,
        fc.integer({ min: 1, max: 5000 }),
        fc.array(Turn, { maxLength: 40 }),
        (p, depth0, turns) => {
          const plan: RampPlan = { rampRates: p.rampRates, dwellSeconds: p.dwellSeconds };
          const state = RampState.parse({ returnWindowSeconds: p.returnWindowSeconds, baseline: depth0 });
          const sim: Sim = { state, now: 1_000_000, moved: 0, baseline: depth0, halted: false };
          let v = startAt(plan, state, sim, 0);
          check(plan, v, sim);
          apply(sim, plan, v, 'hold');
          for (const t of turns) {
            advance(sim, v.dwellSeconds + t.late, t.pace);
            const depth = t.empty ? 0 : Math.max(0, sim.baseline - sim.moved + t.offset);
            const m = {
              now: sim.now,
              moved: sim.moved,
              depth,
              baseline: sim.baseline,
              backlog: t.backlog,
              checks: 1,
              maxChecks: 1500,
              backlogFactor: 2,
            };
            if (sim.halted) {
              expect(gateVerdict(plan, sim.state, m).action).toBe('halt');
              continue;
            }
            v = gateVerdict(plan, sim.state, m);
            check(plan, v, sim);
            if (v.action === 'examine' || v.action === 'stop-and-drain') {
              apply(sim, plan, v, 'hold');
              v =
                v.action === 'examine'
                  ? inventoryVerdict(
                      plan,
                      sim.state,
                      {
                        now: sim.now,
                        moved: sim.moved,
                        partial: t.partial && t.returned === 0 ? 'stopped' : null,
                        payloadRefusal: null,
                        returned: t.returned,
                        returnedBySource: { src: t.returned },
                        late: t.late2,
                        present: depth,
                        toPark: t.toPark,
                        baseline: sim.baseline,
                      },
                      v.why,
                    )
                  : drainVerdict(plan, sim.state, {
                      now: sim.now,
                      moved: sim.moved,
                      depth: null,
                      baseline: sim.baseline,
                      leftoverRestarts: 0,
                    });
              check(plan, v, sim);
            }
            const decision = v.action === 'halt' || v.action === 'done' ? v.action : 'hold';
            apply(sim, plan, v, decision);
            if (decision === 'halt') sim.halted = true;
            if (decision === 'done') break;
          }
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('mover: the exposure it reports never exceeds its bound; it steps one plan rate at a time', () => {
    fc.assert(
      fc.property(Plan, fc.array(Turn, { maxLength: 40 }), (p, turns) => {
        const plan: RampPlan = { rampRates: p.rampRates, dwellSeconds: p.dwellSeconds };
        const sim: Sim = {
          state: RampState.parse({ returnWindowSeconds: p.returnWindowSeconds }),
          now: 5_000_000,
          moved: 0,
          baseline: Number.MAX_SAFE_INTEGER,
          halted: false,
        };
        sim.state = { ...sim.state, rate: plan.rampRates[0] as number, cleanAt: sim.now };
        sim.state = { ...sim.state, ...rateInForce(sim.state, sim.state.rate, sim.now, sim.moved) };
        for (const t of turns) {
          const before = sim.moved;
          const startedAt = sim.now;
          sim.state = { ...sim.state, ...rateInForce(sim.state, sim.state.rate, sim.now, sim.moved) };
          advance(sim, p.dwellSeconds + t.late, t.pace);
          const v = moverVerdict(plan, sim.state, {
            now: sim.now,
            passStartedAt: startedAt,
            moved: sim.moved,
            passMoved: sim.moved - before,
            returned: t.returned > 3 ? 1 : 0,
            returnedBySource: { src: 1 },
            sendFailures: [],
            complete: t.complete,
            inFlight: t.inFlight,
            lastSentAt: sim.now,
            visibilitySeconds: 60,
            queue: 'dlq',
            selected: sim.moved,
            left: {},
            fifoHeld: 0,
            notSelected: 0,
            heldGroups: null,
          });
          check(plan, v, sim);
          expect(v.rateIndex - sim.state.rateIndex).toBeLessThanOrEqual(1);
          sim.state = { ...sim.state, ...v.patch, rateIndex: v.rateIndex, rate: v.rate };
          if (v.action === 'halt' || v.action === 'done') break;
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('bounds a break by the rates in force over the return window: 5 msg/s for 5 s, then 25 msg/s for 5 s is 150', () => {
    const plan: RampPlan = { rampRates: [5, 25, 100], dwellSeconds: 2 };
    let state = RampState.parse({ returnWindowSeconds: 5 });
    state = { ...state, ...rateInForce(state, 5, 0, 0) };
    const first = gateVerdict(
      plan,
      { ...state, rate: 5 },
      {
        now: 5000,
        moved: 25,
        depth: 175,
        baseline: 200,
        backlog: 0,
        checks: 1,
        maxChecks: 1500,
        backlogFactor: 2,
      },
    );
    expect([first.action, first.why.code]).toEqual(['step-up', 'healthy']);
    state = { ...state, ...first.patch, rateIndex: 1, rate: 25 };
    state = { ...state, ...rateInForce(state, 25, 5000, 25) };
    const halt = gateVerdict(plan, state, {
      now: 10_000,
      moved: 150,
      depth: 60,
      baseline: 200,
      backlog: 0,
      checks: 2,
      maxChecks: 1500,
      backlogFactor: 2,
    });
    expect(halt.action).toBe('examine');
    expect(halt.exposure).toMatchObject({ atRisk: 125, bound: 150 });
    expect(halt.exposure.basis.terms).toEqual([
      { rate: 5, seconds: 5, messages: 25 },
      { rate: 25, seconds: 5, messages: 125 },
    ]);
    // A task that started late moved fewer than its rate allows: the term is what it moved.
    const late = gateVerdict(plan, state, {
      now: 10_000,
      moved: 120,
      depth: 90,
      baseline: 200,
      backlog: 0,
      checks: 2,
      maxChecks: 1500,
      backlogFactor: 2,
    });
    expect(late.exposure).toMatchObject({ atRisk: 95, bound: 120 });
    expect(late.exposure.basis.terms.map((t) => t.messages)).toEqual([25, 95]);
  });
});
