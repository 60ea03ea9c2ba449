import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runCell } from './crash-cell.js';
import { useCrashStack } from './crash-stack.js';
import { describeSchedule, schedule } from './schedule.js';

// The bounded run of the conservation property; `npm run conservation` runs it longer.
const SEED = 9009;
const RUNS = 3;

describe('conservation under random fault schedules (fast-check, local stack, real handlers and ASL)', () => {
  useCrashStack();

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
