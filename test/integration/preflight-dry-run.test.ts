/**
 * A dry run makes every check the real run of the same input makes: the real Preflight and Notify
 * handlers on the local stack, the same plan once with `mode: 'dry-run'` and once as the redrive,
 * compared on refusal and warnings; the dry run's report names what would be parked, sampled and
 * moved, the ramp and its estimated wall time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecutionPlan } from '#incident/execution-input.js';
import { sqsClient } from '#platform/clients.js';
import { handler as notifyHandler } from '../../functions/notify/handler.js';
import type { NotifyResult } from '../../functions/notify/notify.js';
import { handler as preflightHandler } from '../../functions/preflight/handler.js';
import type { PreflightResult } from '../../functions/preflight/preflight.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { createQueue, lambdaContext, planFor, seedAndInventory } from '../support/redrive-fixtures.js';

const preflight = (plan: ExecutionPlan, executionName: string) =>
  preflightHandler(
    { action: 'preflight', plan, executionName } as never,
    lambdaContext,
  ) as Promise<PreflightResult>;

const oom = { 'error-class': { DataType: 'String', StringValue: 'OutOfMemoryError' } };

/** A DLQ with `healthy` transient failures and `poison` OutOfMemoryError ones, inventoried. */
async function seed(name: string, healthy: number, poison: number) {
  return seedAndInventory({
    sqs: sqsClient(),
    dlqName: `${name}-dlq`,
    sourceNames: [`${name}-src`],
    messages: [
      ...Array.from({ length: healthy }, (_, i) => ({ body: `{"n":${i}}` })),
      ...Array.from({ length: poison }, (_, i) => ({ body: `{"poison":${i}}`, attributes: oom })),
    ],
    incidentId: `inc-${name}`,
  });
}

/** The dry run first (it takes no lease), then the real run of the same plan. */
async function bothRuns(plan: ExecutionPlan, name: string) {
  const dry = await preflight({ ...plan, mode: 'dry-run' }, `${name}-dry`);
  const real = await preflight(plan, `${name}-real`);
  return { dry, real };
}

describe('dry run and real run of the same input (real Preflight and Notify, local stack)', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('C07 poison with no parking queue: the dry run is refused with the sentence the real run is refused with', async () => {
    const dlq = await seed('dry-no-parking', 6, 3);
    const { dry, real } = await bothRuns(planFor(dlq, { parkingQueueUrl: null, discardPoison: false }), 'np');
    expect(real.ok).toBe(false);
    expect(real.refusal).toMatch(
      /^redrive refused: 3 message\(s\) must not be redriven .*configure a parking queue/,
    );
    expect([dry.ok, dry.refusal, dry.warnings]).toEqual([real.ok, real.refusal, real.warnings]);
    expect(dry.forecast).toBeUndefined();
  });

  it('a run that passes with warnings: the dry run passes with the same warnings and forecasts parked, sampled, moved and the ramp', async () => {
    const dlq = await seed('dry-warnings', 20, 4);
    const parking = await createQueue(sqsClient(), 'dry-warnings-parking');
    const plan = planFor(dlq, {
      parkingQueueUrl: parking,
      sampleSize: 3,
      rampRates: [2, 50],
      dwellSeconds: 5,
      verifyMarginSeconds: 1,
    });
    const { dry, real } = await bothRuns(plan, 'w');
    expect(real.ok).toBe(true);
    expect(real.warnings).toContain(
      '4 do-not-redrive message(s) will be moved to the parking queue before the bulk move (a move task cannot skip messages)',
    );
    expect([dry.ok, dry.refusal, dry.warnings]).toEqual([real.ok, real.refusal, real.warnings]);
    const window = dry.verifyWindowSeconds;
    const first = 2 * Math.max(5, window);
    expect(dry.forecast).toEqual({
      toPark: 4,
      parkTo: 'parking-queue',
      sample: 3,
      toMove: 17,
      steps: [
        {
          rate: 2,
          messages: Math.min(17, first),
          seconds: 17 <= first ? Math.ceil(17 / 2) : Math.max(5, window),
        },
        ...(17 > first ? [{ rate: 50, messages: 17 - first, seconds: 1 }] : []),
      ],
      verifyWindowSeconds: window,
      estimatedSeconds: expect.any(Number),
    });

    const notified = (await notifyHandler(
      {
        outcome: 'dry-run',
        run: { plan: { ...plan, mode: 'dry-run' }, preflight: dry },
        executionName: 'w-dry',
      } as never,
      lambdaContext,
    )) as NotifyResult;
    expect(notified.text).toContain('nothing moved; a redrive now would park 4, sample 3');
    expect(notified.text).toContain('move 17 at 2 msg/s');
    expect(notified.text).toMatch(/about \d+ (s|min)/);
    expect(notified.text).toContain(`Warnings: ${real.warnings.join('; ')}.`);
  });

  it('another run holds the DLQ: the dry run is refused like the real run, and neither takes the lease', async () => {
    const dlq = await seed('dry-leased', 5, 0);
    const holder = await preflight(planFor(dlq, { incidentId: 'inc-holder' }), 'holder');
    expect(holder.ok).toBe(true);
    const { dry, real } = await bothRuns(planFor(dlq), 'leased');
    expect(real.refusal).toBe(
      'redrive refused: another redrive of this DLQ is in progress (incident inc-holder, execution holder)',
    );
    expect([dry.ok, dry.refusal, dry.warnings]).toEqual([real.ok, real.refusal, real.warnings]);
  });

  it('a second un-park while one runs is refused naming the run that holds the DLQ, not for selecting nothing (the first took the parked messages)', async () => {
    const dlq = await seed('unpark-leased', 4, 0);
    const parkingQueueUrl = await createQueue(sqsClient(), 'unpark-leased-parking');
    const first = await preflight(planFor(dlq, { unpark: true, parkingQueueUrl }), 'unpark-first');
    // Nothing is parked here, as after the first un-park run moved every parked message back.
    expect(first.refusal).toMatch(/^redrive refused: unpark: none of the 0 parked message\(s\)/);
    const holder = await preflight(planFor(dlq, { incidentId: 'inc-unparking' }), 'unparking');
    expect(holder.ok).toBe(true);
    const { dry, real } = await bothRuns(planFor(dlq, { unpark: true, parkingQueueUrl }), 'unpark-second');
    expect([real.refusal, dry.refusal]).toEqual([
      'redrive refused: another redrive of this DLQ is in progress (incident inc-unparking, execution unparking)',
      'redrive refused: another redrive of this DLQ is in progress (incident inc-unparking, execution unparking)',
    ]);
  });
});
