/**
 * The conservation property (issue 9), run longer than `npm test` does: random fault schedules
 * (test/crash/schedule.ts: a crash right after an AWS call of triage or a workflow function,
 * recovered by a Lambda retry or a console restart; messages deleted by hand; late arrivals) on the
 * local stack with the real handlers and ASL, each judged by test/crash/crash-cell.ts.
 *
 *   npm run conservation                       # 30 runs, a random seed (printed)
 *   npm run conservation -- --runs 100 --seed 42
 *
 * Exit 0 when every run kept the property; on a failure the schedule and its problems are printed
 * with the seed and path that replay it.
 */
await import('../test/crash/env.js');

const fc = (await import('fast-check')).default;
const { startLocalStack } = await import('../local/stack.js');
const { runCell } = await import('../test/crash/crash-cell.js');
const { describeSchedule, schedule } = await import('../test/crash/schedule.js');

function flag(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
}
const runs = Number(flag('--runs') ?? 30);
const seed = Number(flag('--seed') ?? Math.floor(Math.random() * 2 ** 31));

const stack = await startLocalStack();
try {
  let n = 0;
  process.stderr.write(`conservation: ${runs} runs, seed ${seed}\n`);
  const result = await fc.check(
    fc.asyncProperty(schedule, async (spec) => {
      const outcome = await runCell({ ...spec, id: `cons-${seed}-${n++}` });
      const line = `${describeSchedule(spec)} (${(outcome.durationMs / 1000).toFixed(0)} s)`;
      process.stderr.write(
        `${outcome.problems.length === 0 ? 'pass' : 'FAIL'}: ${line}${outcome.problems.length ? `: ${outcome.problems.join('; ')}` : ''}\n`,
      );
      return outcome.problems.length === 0;
    }),
    { seed, numRuns: runs, endOnFailure: true },
  );
  process.stdout.write(
    `${JSON.stringify({ runs: result.numRuns, seed, failed: result.failed, counterexample: result.counterexample, path: result.counterexamplePath })}\n`,
  );
  process.exitCode = result.failed ? 1 : 0;
} finally {
  await stack.stop();
}
