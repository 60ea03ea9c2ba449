/**
 * The order test files start in: one project's files together, and in each project longest
 * first, so that no long file starts last and runs alone at the end
 * (longest-processing-time-first scheduling).
 *
 * A file's length is its duration in vitest's results cache (`node_modules/.vite`, written by the
 * previous run on this checkout). A fresh clone, as CI has, has no cache: vitest's own order is
 * then by file size, which starts the short-sourced but long-running workflow scenarios last. For
 * a file without a cached duration its measured duration (the long files are named) or its
 * folder's typical one stands in.
 *
 * @see https://vitest.dev/config/#sequence-sequencer
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Typical duration of a file the cache does not know, milliseconds: the long files by name, then
 * by folder (first match wins). Measured on the 2-core machine, quiet; a file's order matters only
 * against the others. A fresh clone (CI) has no cache: a long file this list does not name starts
 * late and can run alone at the end (reconcile-after-failure, 61 s, unnamed: 181 s on a fresh
 * clone against 143 s with the cache; then pipeline-stack, 100 s with its beforeAll, and
 * cli-local-stack, 55 s, named by vitest's JSON durations, which leave hooks out: 190 s).
 */
const TYPICAL_MS: ReadonlyArray<readonly [prefix: string, ms: number]> = [
  // npm run test:long: the restart after a crashed triage waits out a hold (~180 s), the property ~140 s.
  ['test/crash/', 120_000],
  // npm test on 8 workers in a fresh clone, quiet machine (aaffafb, `.ci/run`): every file of 7 s
  // or more, as the reporter prints it (hooks included: pipeline-stack's beforeAll bundles all 14
  // functions, cli-local-stack's starts the local stack).
  ['test/infra/pipeline-stack.test.ts', 100_000],
  ['test/workflow/reconcile-after-failure.test.ts', 62_000],
  ['test/workflow/redrive-happy.test.ts', 56_000],
  ['test/workflow/cli-local-stack.test.ts', 55_000],
  ['test/workflow/redrive-guards.test.ts', 51_000],
  ['packages/consumer-idempotency/test/local-stack.test.ts', 36_000],
  ['test/integration/park-batches.test.ts', 36_000],
  ['test/workflow/redrive-crash.test.ts', 35_000],
  ['test/infra/monitored-dlq.test.ts', 34_000],
  ['test/integration/reconcile.test.ts', 34_000],
  ['test/integration/verify-sample.test.ts', 33_000],
  ['test/integration/fifo-deep-groups.test.ts', 33_000],
  ['test/integration/mover.test.ts', 32_000],
  ['test/integration/redrive-hostile-sample.test.ts', 31_000],
  ['test/integration/redrive-hostile.test.ts', 30_000],
  ['test/integration/sample-redrive.test.ts', 28_000],
  ['test/workflow/cli-runs.test.ts', 27_000],
  ['test/integration/park.test.ts', 27_000],
  ['test/cli/cli-arguments.test.ts', 25_000],
  ['test/integration/triage-hostile.test.ts', 24_000],
  ['test/workflow/redrive-mover.test.ts', 24_000],
  ['test/workflow/runner.test.ts', 24_000],
  ['test/unit/crash-matrix-plan.test.ts', 23_000],
  ['test/integration/local-stack.test.ts', 22_000],
  ['test/workflow/mover-cross-account.test.ts', 21_000],
  ['test/unit/big-incident-payloads.test.ts', 21_000],
  ['packages/consumer-idempotency/test/entry-point.test.ts', 19_000],
  ['test/unit/asl.test.ts', 19_000],
  ['test/unit/npm-start-args.test.ts', 19_000],
  ['test/integration/triage.test.ts', 18_000],
  ['test/integration/ledger-ownership.test.ts', 16_000],
  ['test/integration/extended-client.test.ts', 16_000],
  ['test/integration/slack-workflow.test.ts', 15_000],
  ['test/infra/pipeline-constructs.test.ts', 15_000],
  ['test/integration/triage-budgets.test.ts', 13_000],
  ['test/infra/execution-ended-rule.test.ts', 13_000],
  ['test/integration/sqs-indexed.test.ts', 12_000],
  ['test/integration/move-task.test.ts', 12_000],
  ['test/integration/triage-after-crash.test.ts', 11_000],
  ['test/integration/preflight.test.ts', 11_000],
  ['test/workflow/redrive-lease.test.ts', 9_000],
  ['test/workflow/parking-size-mover.test.ts', 9_000],
  ['test/infra/monitoring.test.ts', 7_000],
  ['test/workflow/', 5_000],
  ['test/infra/', 5_000],
  ['packages/', 3_000],
  ['test/integration/', 3_000],
  ['test/cli/', 3_000],
];
const OTHER_MS = 1_000;

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const expected = (spec: TestSpecification): number => {
      const path = relative(root, spec.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${path}`);
      if (cached && cached.duration > 0) return cached.duration;
      return TYPICAL_MS.find(([prefix]) => path.startsWith(prefix))?.[1] ?? OTHER_MS;
    };
    const byLength = (await super.sort(files)).map((spec, order) => ({ spec, order, ms: expected(spec) }));
    // Stable: equal expectations keep vitest's order (by file size).
    byLength.sort((a, b) => b.ms - a.ms || a.order - b.order);
    // One project's files together, the project with the longest file first: vitest hands a
    // finished non-isolated worker the next file only when that file is of the same project, and
    // otherwise stops it and starts a new one that imports the SDK, the handlers and the stand-ins
    // again. Interleaved by length, `unit` and `integration` started 26 workers in one run of
    // `npm test` (4 workers); grouped, each project starts at most maxWorkers.
    const projects = [...new Set(byLength.map(({ spec }) => spec.project.name))];
    return byLength
      .sort((a, b) => projects.indexOf(a.spec.project.name) - projects.indexOf(b.spec.project.name))
      .map(({ spec }) => spec);
  }
}
