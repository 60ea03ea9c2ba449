import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { runCell } from './crash-cell.js';
import { describeSchedule, schedule } from './schedule.js';

// The bounded run of the conservation property; `npm run conservation` runs it longer.
const SEED = 9009;
const RUNS = 3;

describe('conservation under random fault schedules (fast-check, local stack, real handlers and ASL)', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    process.env.REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS = '3';
    process.env.TRIAGE_SAFETY_MARGIN_MS = '3000';
    stack = await startLocalStack();
  });
  afterAll(async () => {
    delete process.env.REDRIVE_RECEIVE_VISIBILITY_TIMEOUT_SECONDS;
    delete process.env.TRIAGE_SAFETY_MARGIN_MS;
    await stack?.stop();
  });

  it(
    'inventoried + late = redriven + parked + discarded + in DLQ + in flight + missing; missing is what was deleted by hand; every duplicate delivery is recorded',
    async () => {
      let n = 0;
      const seen: string[] = [];
      await fc.assert(
        fc.asyncProperty(schedule, async (spec) => {
          const outcome = await runCell({ ...spec, id: `cons-${SEED}-${n++}` });
          seen.push(describeSchedule(spec));
          expect(outcome.problems, describeSchedule(spec)).toEqual([]);
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
      expect(seen).toHaveLength(RUNS);
    },
    RUNS * 240_000,
  );
});
